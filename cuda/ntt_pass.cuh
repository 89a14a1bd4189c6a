#pragma once
#include "ntt_tables.cuh"

// ---------------------------------------------------------------------------
// One pass of k consecutive radix-2 stages in shared memory.
//
// The forward transform is the radix-2 decimation in frequency: stages of
// span len = N/2, N/4, ..., 1, butterfly (x, y) at i, i + len ->
// (x + y, (x - y) * w^((i mod len) * N / (2 len))). Its inverse is the
// decimation in time, spans 1, 2, ..., N/2, (x, y) -> (x + y t, x - y t),
// t = w^-((i mod len) * N / (2 len)). The host groups the log2 N stages into
// passes (at most 14 stages; src/gpu/ntt/plan.rs, `passes`), so a transform reads
// and writes device memory two or three times instead of log2 N times.
//
// A pass of spans s * 2^(k-1) down to s (up, inverse) works on groups of
// 2^k elements i = base + j * s + r (j < 2^k, r < s, base a multiple of
// 2L = s * 2^k), closed under its stages. The twiddle of stage q (span
// s * 2^q) at j, r is root(j mod 2^q, order 2^(q+1)) * z^(2^(k-1-q)) with
// z = w^(r * N / 2L). The z factor is the same for the whole upper half it
// multiplies, which no later stage of the pass mixes with anything else, so it
// moves to the end of the pass: element j gets z^bitrev_k(j) once, and the
// stages use only the small table of roots of order up to 2^14. (The inverse moves it
// to the start, as z^-bitrev_k(j).) One power of w per element per pass,
// from two small tables.
//
// A block holds a tile of T = 2^log_t elements (the host picks log_t <= 14,
// smaller for small N so that a pass has several blocks; src/gpu/ntt/plan.rs,
// `tile_log`): C = min(s, T / 2^k) consecutive residues r of O = T / (2^k C)
// consecutive groups, tile element t = (o * 2^k + j) * C + r. With C >= 8
// every global access covers at least one whole 32-byte sector; the last
// pass (s = 1) reads and writes whole contiguous groups.
//
// The first forward pass reads the operand's limbs (`limbs`, xn of them) and
// cuts them into 32-bit coefficients itself (zero past 2 * xn). Otherwise a
// pass reads a. It always writes a.
//
// A product's turn (NTT_TURN) is one pass where the forward transform of one
// operand ends and the inverse of the product begins: the last forward pass
// and the first inverse one have the same tiles (span 1 up, whole contiguous
// groups), so a block takes its tile through the last forward stages, the
// pointwise product with the other operand's finished transform b (b = a:
// the square), and the first inverse stages, with one trip through device
// memory where two passes made two.
// ---------------------------------------------------------------------------
// Where tile element t lies in shared memory. In a pass without a twist
// (PAD: its groups are whole, C = 1; the last forward pass, the turn, the
// first inverse pass), 2^(sh-3) words of padding follow every 2^sh
// elements (the tile takes 9/8 of its elements' words, NTT_TILE_WORDS);
// otherwise the tile is as it is. Shared memory has 32 banks, word w in
// bank w mod 32, and a warp's accesses to words in one bank are served one
// after another. Unpadded, a step of a pass with C = 1 that starts at stage
// 2 or 3 reads element m of its lanes' groups at 2^(p+3) hi + 2^p m + low
// (lane 2^p hi + low): 2^p banks for 32 lanes, each load and store served
// 8 or 4 times over; and a bottom step of whole groups of 8 moves its
// lanes' four-word pieces two times over. sh = 5 where the steps start at 0
// (groups of 4), 2, 5, 8, 11 (ntt_bottom_stages): 4 words after every 32
// put those lanes at 36 hi + 4 m + low and the bottom step's pieces at 4 l
// + 4 (l >> 3), every bank once. sh = 6 where the steps start at 0 (groups
// of 8), 3, 6, ...: 8 words after every 64 put the step from stage 3's
// lanes at 72 hi + 8 m + low, every bank once (the bottom step's pieces
// stay two times over). A twisted pass's lanes take consecutive r, and it
// keeps its layout. (RESULTS.md, "Transform passes".)
//
// tile_word(x + y) = tile_word(x) + tile_word(y) where (x mod 2^sh) + (y
// mod 2^sh) < 2^sh: for x and y with no bit in common (a group's first
// element and its offsets m d), and for y a multiple of 64 (a step's
// threads << R, as blocks have at least 32 threads; a batch's i *
// threads). And tile_word(m d) = m tile_word(d) for m < 2^R where 2^R d <=
// 2^sh or d is a multiple of 2^sh: in a pass with C = 1 a step's d is 2^p,
// and with the starts above either holds at every step. So the loops pad a
// group's or a batch's first index once and step by padded distances, as
// they stepped by plain ones.
template <bool PAD>
NTT_FN u32 tile_word(u32 t, u32 sh) { return PAD ? t + ((t >> sh) << (sh - 3)) : t; }
#define NTT_TILE_WORDS(log_t) ((1u << (log_t)) + ((1u << (log_t)) >> 3))

// Butterfly group u of a pass (tile layout above: t = (o * 2^k + j) * C + r):
// the tile index of its first element. The group's elements lie 2^p apart in
// j, so its first j is u's j-part with `width` zero bits inserted at p (a
// group of 2^width elements, ntt_group); *low gets j's bits below p, the
// stage roots' offset.
NTT_FN u32 group_start(u32 u, u32 log_c, u32 k, u32 p, u32 width, u32 *low) {
    const u32 r = u & ((1u << log_c) - 1), rest = u >> log_c;
    const u32 jq = rest & ((1u << (k - width)) - 1), o = rest >> (k - width);
    *low = jq & ((1u << p) - 1);
    const u32 j0 = ((jq >> p) << (p + width)) | *low;
    return (((o << k) + j0) << log_c) | r;
}

// log2 of the most elements a thread takes through a step of stages in
// registers, for tiles of 2^log_t and blocks of `launched` threads (the
// host's choice, src/gpu/ntt/plan.rs `pass_threads`): NTT_GROUP_LOG, 3 (three
// stages, 12 butterflies per trip through shared memory) where the tile has
// at least one such group a thread, fewer in small tiles so that no thread
// idles. Correctness does not depend on it: every loop runs over the block's
// threads, whatever their number (the host model runs as many as the GPU
// launches). Measured on the H100 (RESULTS.md, "Transform passes"): groups
// of 8 took a 10^6-limb product's device time from 1.075 to 1.000 ms
// against groups of 4; groups of 16 need more than the 40 registers three
// blocks of 512 threads leave (they spilled, and at two blocks an SM were
// no faster than 8); storing the tile swizzled to remove the last pass's
// bank conflicts was slower (an XOR an element; padded, tile_word, it
// costs nothing in the loops and gained a little). Stage roots with their
// quotients (shoup_mul) were slower while each root took a load of its
// own (1.181 against 1.000 ms), and faster once a stage's roots and
// quotients came in two vector loads (H200, 10^7 x 10^7 limbs 4.87 ->
// 4.58 ms, though the two more
// registers a root make the step spill a few words at 40; with 64
// registers, two blocks an SM, no spill and 4.83 ms).
NTT_FN u32 ntt_group_log(u32 log_t, u32 launched) {
    u32 threads_log = 0;
    while ((2u << threads_log) <= launched) threads_log++;
    const u32 r = log_t > threads_log ? log_t - threads_log : 1;
    return r > NTT_GROUP_LOG ? NTT_GROUP_LOG : r;
}

// A group's G elements between the tile and x (ntt_group's and
// ntt_turn_group's): WHOLE, consecutive, moved four at a time; else dw
// words apart.
template <int G, bool WHOLE>
NTT_FN void group_load(u32 *x, const u32 *tile, u32 w0, u32 dw) {
    static_assert(!WHOLE || G % 4 == 0, "a whole group is moved in fours");
    if (WHOLE) {
#pragma unroll
        for (int m = 0; m < G; m += 4) {
            const uint4 v = *(const uint4 *)&tile[w0 + m];
            x[m] = v.x, x[m + 1] = v.y, x[m + 2] = v.z, x[m + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int m = 0; m < G; m++) x[m] = tile[w0 + m * dw];
    }
}
template <int G, bool WHOLE>
NTT_FN void group_store(u32 *tile, u32 w0, u32 dw, const u32 *x) {
    static_assert(!WHOLE || G % 4 == 0, "a whole group is moved in fours");
    if (WHOLE) {
#pragma unroll
        for (int m = 0; m < G; m += 4) *(uint4 *)&tile[w0 + m] = uint4{x[m], x[m + 1], x[m + 2], x[m + 3]};
    } else {
#pragma unroll
        for (int m = 0; m < G; m++) tile[w0 + m * dw] = x[m];
    }
}

// The roots of stages p .. p + R - 1 for one group (ntt_group): w[2^s + c]
// gets root c of stage p + s (c < 2^s), the power low + c 2^p of the root of
// order 2^(p+s+1), from the stage roots' table (ntt_root_slot), and wq[2^s +
// c] its quotient (shoup_mul). PACKED: p
// is where a step starts in the layout `roots` is in (ntt_step_start: every
// step where groups have 8 elements), so a stage's roots are consecutive
// aligned words: one load of 1, 2 or 4 words a stage. Otherwise (the
// smaller groups of small tiles, on the first layout) each root's slot is
// computed.
// (w and wq have 8 words, for s <= 2: their words for other stages are left
// as they are.)
template <bool PACKED>
NTT_FN void ntt_stage_roots(u32 *w, u32 *wq, int s, const u32 *roots, u32 p, u32 low) {
    // Each root's quotient (shoup_mul) lies 2 NTT_ROOTS words after it.
    if (PACKED) {
        // One 32-bit index (a 64-bit sum of the two terms took four
        // instructions an address where one IMAD.WIDE.U32 does).
        const u32 *at = &roots[(1u << (p + s)) + (low << s)];
        if (s == 0) {
            w[1] = LDG(at);
            wq[1] = LDG(at + 2 * NTT_ROOTS);
        } else if (s == 1) {
            const uint2 v = LDG((const uint2 *)at), vq = LDG((const uint2 *)(at + 2 * NTT_ROOTS));
            w[2] = v.x, w[3] = v.y;
            wq[2] = vq.x, wq[3] = vq.y;
        } else {
            const uint4 v = LDG((const uint4 *)at), vq = LDG((const uint4 *)(at + 2 * NTT_ROOTS));
            w[4] = v.x, w[5] = v.y, w[6] = v.z, w[7] = v.w;
            wq[4] = vq.x, wq[5] = vq.y, wq[6] = vq.z, wq[7] = vq.w;
        }
    } else {
#pragma unroll
        for (int c = 0; c < (1 << s); c++) {
            const u32 slot = ntt_root_slot(p + s, low + (c << p), 0);
            w[(1 << s) + c] = LDG(&roots[slot]);
            wq[(1 << s) + c] = LDG(&roots[slot + 2 * NTT_ROOTS]);
        }
    }
}

// Stages p .. p + R - 1 of a pass on one group of 2^R tile elements, tile
// index i0 + m d for m < 2^R (their j's are low + m 2^p, d = 2^p C; shared
// words w0 + m dw, tile_word), in registers. Stage p + s pairs m and m +
// 2^s (bit s of m clear), and its root depends on j mod 2^(p+s) = low +
// (m mod 2^s) 2^p alone: power low + (m mod 2^s) 2^p of the root of order
// 2^(p+s+1) (ntt_stage_roots). A stage
// loads its 2^s roots at once, and a warp's lanes (consecutive `low` where
// p >= 5) load consecutive words: with the roots of order 2^14 in one table,
// indexed by low << (13 - p - s), they were 2^(13-p-s) words apart, and in
// the middle steps each lane read its own sector (ncu: 70% of a
// 2^14-element pass's global sectors were excess; RESULTS.md, "Transform
// passes").
//
// WHOLE: the group's elements are consecutive (d = 1: the bottom step of a
// pass whose groups are whole, C = 1), and a lane moves them four at a time.
// With one word a load, its lanes' words were 2^R apart: a 2^R-way bank
// conflict on every load and store of that step.
//
// BOTTOM: p = 0 (the pass's bottom step), so low = 0: the roots are the same
// for every group, and the step loads them once (`bottom`, ntt_step). Each
// stage's first root (c = 0) is r^0 = 1: 7 of the 12 butterflies of a group
// of 8 multiply by 1. Those skip the product (a residue times 1 is itself;
// going forward the difference is reduced by mod_sub instead): the same
// residues, so the same transform, bit for bit.
//
// HALF: the group's upper half is zero (the first step of a first forward
// pass whose operand lies in the transform's lower half: ntt_pass_tile's
// `half`), so it is not read, and the top stage's butterflies (x, 0) ->
// (x, x w) are a product each.
template <int R, bool INVERSE, bool WHOLE, bool BOTTOM, bool PACKED, bool HALF = false>
NTT_FN void ntt_group(u32 *tile, u32 w0, u32 dw, u32 low, u32 p, const u32 *roots, const u32 *bottom,
                      const u32 *bottom_q, const NttPrime &q) {
    constexpr int G = 1 << R;
    static_assert(!WHOLE || G >= 4, "a whole group is moved in fours");
    static_assert(!WHOLE || BOTTOM, "a whole group is in the bottom step");
    static_assert(!BOTTOM || PACKED, "the bottom step's roots are consecutive");
    static_assert(!HALF || (!INVERSE && !WHOLE && !BOTTOM), "a zero upper half is a forward pass's top step's");
    u32 x[G];
    if (HALF) {
        group_load<G / 2, false>(x, tile, w0, dw);
    } else {
        group_load<G, WHOLE>(x, tile, w0, dw);
    }
    u32 w[8], wq[8];
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int s = INVERSE ? i : R - 1 - i;  // decimation in frequency: top stage first
        if (!BOTTOM) ntt_stage_roots<PACKED>(w, wq, s, roots, p, low);
#pragma unroll
        for (int c = 0; c < (1 << s); c++) {
            const bool one = BOTTOM && c == 0;  // the root is 1 (BOTTOM above)
            const u32 root = one ? 0 : BOTTOM ? bottom[(1 << s) + c] : w[(1 << s) + c];
            const u32 quot = one ? 0 : BOTTOM ? bottom_q[(1 << s) + c] : wq[(1 << s) + c];
#pragma unroll
            for (int m = c; m < G; m += 2 << s) {
                if (HALF && i == 0) {
                    // (x[m], 0): x[m] stays, x[m] + p is x[m] times the root.
                    x[m + (1 << s)] = shoup_mul(x[m], root, quot, q);
                    continue;
                }
                const u32 x0 = x[m], x1 = x[m + (1 << s)];
                if (INVERSE) {
                    const u32 t = one ? x1 : shoup_mul(x1, root, quot, q);
                    x[m] = mod_add(x0, t, q);
                    x[m + (1 << s)] = mod_sub(x0, t, q);
                } else {
                    x[m] = mod_add(x0, x1, q);
                    // x0 - x1 + p < 2p: shoup_mul takes it unreduced.
                    x[m + (1 << s)] = one ? mod_sub(x0, x1, q) : shoup_mul(x0 - x1 + q.p, root, quot, q);
                }
            }
        }
    }
    group_store<G, WHOLE>(tile, w0, dw, x);
}

// One step of a pass: stages p .. p + R - 1 on every group of the tile.
// (WHOLE: p = 0 and C = 1; BOTTOM: p = 0; PACKED: p a step's start in the
// roots' layout; see ntt_group. PAD: the tile's layout, tile_word, with
// `sh` its shift.)
template <int R, bool INVERSE, bool WHOLE, bool BOTTOM, bool PACKED, bool PAD, bool HALF = false>
NTT_FN void ntt_step(u32 *tile, u32 T, u32 log_c, u32 k, u32 p, const u32 *roots, const NttPrime &q, u32 thread,
                     u32 threads, u32 sh) {
    const u32 dw = tile_word<PAD>((1u << p) << log_c, sh);
    u32 bottom[8], bottom_q[8];
    if (BOTTOM) {
#pragma unroll
        for (int s = 1; s < R; s++) ntt_stage_roots<true>(bottom, bottom_q, s, roots, 0, 0);
    }
    if (threads >> (log_c + p)) {
        // Groups u = thread + n threads with every bit of n threads at or
        // above bit log_c + p of u, where group_start inserts its R zero
        // bits: a bit by bit map, so the group starts R bits further up
        // each time, and its `low` (u's bits below) is the same. (The
        // steps of large tiles, but the top ones of a pass with C > 1.)
        u32 low;
        const u32 step = tile_word<PAD>(threads << R, sh);
        u32 w0 = tile_word<PAD>(group_start(thread, log_c, k, p, R, &low), sh);
        for (u32 u = thread; u < (T >> R); u += threads, w0 += step)
            ntt_group<R, INVERSE, WHOLE, BOTTOM, PACKED, HALF>(tile, w0, dw, low, p, roots, bottom, bottom_q, q);
    } else {
        for (u32 u = thread; u < (T >> R); u += threads) {
            u32 low;
            const u32 w0 = tile_word<PAD>(group_start(u, log_c, k, p, R, &low), sh);
            ntt_group<R, INVERSE, WHOLE, BOTTOM, PACKED, HALF>(tile, w0, dw, low, p, roots, bottom, bottom_q, q);
        }
    }
}

// What a pass's load phase reads (ntt_pass_tile): the transform itself or
// the operand's limbs (the first forward pass cuts them into coefficients).
#define NTT_LOAD_PLAIN 0
#define NTT_LOAD_LIMBS 1
// ... or, in the wide sets, limbs that are whole coefficients.
#define NTT_LOAD_LIMBS64 2

// What a pass does (cugmp_ntt_pass's `kind`): forward stages, inverse ones,
// or a product's turn (the last forward stages, the pointwise product, the
// first inverse stages: top of this file).
#define NTT_FORWARD 0
#define NTT_INVERSE 1
#define NTT_TURN 2

// How many stages the bottom step of a pass of k stages takes where it is
// not a whole group of 2^group_log: 2 in a pass with C = 1 (the passes
// without a twist) where groups have 8 elements and k = 2 mod 3, else 0
// (the short step, if any, is the top one). A short step
// costs its group's fixed work (shared memory, addresses, roots) for fewer
// butterflies; at the bottom its roots are the same for every group (one
// of its four butterflies multiplies) and, in a pass of whole groups, a
// group is one vector load: ncu had a 10^6-limb product's top steps of two
// stages at 16 warp instructions an element, a middle step of three at
// 14.4. Its padding (tile_word, sh = 5) is what makes it pay: unpadded, the
// step from stage 2 had 8-way bank conflicts and the passes were slower
// (RESULTS.md, "Transform passes").
NTT_FN u32 ntt_bottom_stages(u32 k, u32 group_log, u32 log_c) {
    return log_c == 0 && group_log == NTT_GROUP_LOG && k % NTT_GROUP_LOG == 2 ? 2 : 0;
}

// The stages of a pass on the tile in shared memory (ntt_pass_tile), in
// steps of up to 2^group_log (ntt_group_log) elements a group in registers:
// one trip through shared memory and one barrier a step (ntt_step). Step n
// takes stages from p = n * group_log up, or with a bottom step of b
// stages (ntt_bottom_stages, the roots' second layout), from 0 and then b +
// (n - 1) group_log; a shorter one, if any, is the top one. Forward steps
// go from the top down, inverse ones up. Every thread of the block takes
// part (EACH_THREAD, thread_id of threads); the tile is complete before and
// after.
// (A turn's steps skip their bottom step, `skip_bottom`: ntt_turn_bottom
// makes both directions' bottom steps and the pointwise product between
// them in one.)
// (`half`: the first step's groups have a zero upper half, ntt_group's
// HALF; a forward pass's, of more than one step of whole groups of 8.)
template <bool INVERSE, bool PAD>
NTT_FN void ntt_steps(u32 *tile, u32 T, u32 log_c, u32 k, u32 group_log, const u32 *tab, const NttPrime &q,
                      u32 thread_id, u32 threads, u32 sh, bool skip_bottom = false, bool half = false) {
    static_assert(NTT_GROUP_LOG <= 3, "the switch below has steps of 1 to 3 stages");
    const u32 b = ntt_bottom_stages(k, group_log, log_c);
    const u32 *roots = tab + (b ? NTT_LAYOUT_WORDS : 0) + (INVERSE ? NTT_ROOTS : 0);
    NTT_OPAQUE(roots);
    const u32 steps = b ? 1 + (k - b) / group_log : (k + group_log - 1) / group_log;
    for (u32 i = 0; i < steps; i++) {
        const u32 n = INVERSE ? i : steps - 1 - i;  // from the bottom
        const u32 p = b ? (n ? b + (n - 1) * group_log : 0) : n * group_log;
        const u32 r = b && n == 0 ? b : k - p < group_log ? k - p : group_log;
        const bool bottom = p == 0;
        if (bottom && skip_bottom) continue;
        const bool whole = bottom && log_c == 0 && r >= 2;
        // Groups of fewer than 8 (small tiles) start their steps at p that
        // are not multiples of three: their roots' slots are computed one by
        // one (ntt_stage_roots). Such steps have at most two stages.
        const bool loose = !bottom && group_log != NTT_GROUP_LOG;
        if (!INVERSE && half && i == 0) {
            EACH_THREAD(thread) switch (r) {
            case 1: ntt_step<1, false, false, false, true, PAD, true>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
            case 2: ntt_step<2, false, false, false, true, PAD, true>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
            case 3: ntt_step<3, false, false, false, true, PAD, true>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
            }
            BLOCK_SYNC();
            continue;
        }
        EACH_THREAD(thread) switch (r + 3 * bottom + 3 * whole + 10 * loose) {
        case 1: ntt_step<1, INVERSE, false, false, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 2: ntt_step<2, INVERSE, false, false, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 3: ntt_step<3, INVERSE, false, false, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 4: ntt_step<1, INVERSE, false, true, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 5: ntt_step<2, INVERSE, false, true, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 6: ntt_step<3, INVERSE, false, true, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 8: ntt_step<2, INVERSE, true, true, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 9: ntt_step<3, INVERSE, true, true, true, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 11: ntt_step<1, INVERSE, false, false, false, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        case 12: ntt_step<2, INVERSE, false, false, false, PAD>(tile, T, log_c, k, p, roots, q, thread, threads, sh); break;
        }
        BLOCK_SYNC();
    }
}

// A turn's bottom step (p = 0, C = 1: a group is 2^R consecutive tile
// elements): on each group in registers, the forward's last R stages, the
// pointwise product with the other operand's transform (tile element t at
// bt[t]; bt null: the square, each element times itself; `last`: scaled,
// the turn being the whole transform), and the inverse's first R stages.
// One trip through shared memory and one barrier where the forward's bottom
// step, the pointwise product and the inverse's bottom step made three and
// three (RESULTS.md, "Primes on lanes"). The inverse's roots are the
// forward's, mirrored: root c of the stage of order 2^(s+1) is w^-c =
// -w^(2^s - c) (w^(2^s) = -1), so its butterfly (x0 + t, x0 - t), t = x1
// w^-c, is (x0 - u, x0 + u) with u = x1 w^(2^s - c): the same residues,
// from the forward's roots in registers.
template <int R, bool WHOLE>
NTT_FN void ntt_turn_group(u32 *tile, u32 w0, u32 dw, const u32 *bt, bool last, u32 scale, const u32 *bottom,
                           const u32 *bottom_q, const NttPrime &q) {
    constexpr int G = 1 << R;
    static_assert(!WHOLE || G >= 4, "a whole group is moved in fours");
    u32 x[G];
    group_load<G, WHOLE>(x, tile, w0, dw);
#pragma unroll
    for (int s = R - 1; s >= 0; s--) {
#pragma unroll
        for (int c = 0; c < (1 << s); c++) {
#pragma unroll
            for (int m = c; m < G; m += 2 << s) {
                const u32 x0 = x[m], x1 = x[m + (1 << s)];
                x[m] = mod_add(x0, x1, q);
                x[m + (1 << s)] = c == 0 ? mod_sub(x0, x1, q)
                                         : shoup_mul(x0 - x1 + q.p, bottom[(1 << s) + c], bottom_q[(1 << s) + c], q);
            }
        }
    }
    u32 y[G];
    if (!bt) {
#pragma unroll
        for (int m = 0; m < G; m++) y[m] = x[m];
    } else if (WHOLE) {
#pragma unroll
        for (int m = 0; m < G; m += 4) {
            const uint4 v = LDG((const uint4 *)&bt[m]);
            y[m] = v.x, y[m + 1] = v.y, y[m + 2] = v.z, y[m + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int m = 0; m < G; m++) y[m] = LDG(&bt[m]);
    }
#pragma unroll
    for (int m = 0; m < G; m++) x[m] = last ? mont_mul(mont_mul_lazy(x[m], y[m], q), scale, q) : mont_mul(x[m], y[m], q);
#pragma unroll
    for (int s = 0; s < R; s++) {
#pragma unroll
        for (int c = 0; c < (1 << s); c++) {
#pragma unroll
            for (int m = c; m < G; m += 2 << s) {
                const u32 x0 = x[m], x1 = x[m + (1 << s)];
                if (c == 0) {
                    x[m] = mod_add(x0, x1, q);
                    x[m + (1 << s)] = mod_sub(x0, x1, q);
                } else {
                    const int f = (1 << s) + (1 << s) - c;  // w^(2^s - c)
                    const u32 u = shoup_mul(x1, bottom[f], bottom_q[f], q);
                    x[m] = mod_sub(x0, u, q);
                    x[m + (1 << s)] = mod_add(x0, u, q);
                }
            }
        }
    }
    group_store<G, WHOLE>(tile, w0, dw, x);
}

// ntt_turn_group on every group of the tile (b: the other operand's
// transform at the block's first element, null for a square), as ntt_step
// walks a bottom step's groups, with the bottom step's stages and roots'
// layout of ntt_steps.
template <bool PAD>
NTT_FN void ntt_turn_bottom(u32 *tile, u32 T, u32 k, u32 group_log, const u32 *tab, const NttPrime &q, u32 thread_id,
                            u32 threads, u32 sh, const u32 *b, bool last, u32 scale) {
    const u32 bs = ntt_bottom_stages(k, group_log, 0);
    const u32 r = bs ? bs : k < group_log ? k : group_log;
    const u32 *roots = tab + (bs ? NTT_LAYOUT_WORDS : 0);
    NTT_OPAQUE(roots);
    const u32 dw = tile_word<PAD>(1, sh);
    EACH_THREAD(thread) {
        u32 bottom[8], bottom_q[8];
        for (u32 s = 1; s < r; s++) {
            if (s == 1) ntt_stage_roots<true>(bottom, bottom_q, 1, roots, 0, 0);
            if (s == 2) ntt_stage_roots<true>(bottom, bottom_q, 2, roots, 0, 0);
        }
        u32 low;
        u32 t0 = group_start(thread, 0, k, 0, r, &low);
        u32 w0 = tile_word<PAD>(t0, sh);
        const u32 step = threads << r, wstep = tile_word<PAD>(step, sh);
        for (u32 u = thread; u < (T >> r); u += threads, t0 += step, w0 += wstep) {
            const u32 *bt = b ? b + t0 : nullptr;
            switch (r) {
            case 1: ntt_turn_group<1, false>(tile, w0, dw, bt, last, scale, bottom, bottom_q, q); break;
            case 2: ntt_turn_group<2, true>(tile, w0, dw, bt, last, scale, bottom, bottom_q, q); break;
            case 3: ntt_turn_group<3, true>(tile, w0, dw, bt, last, scale, bottom, bottom_q, q); break;
            }
        }
    }
    BLOCK_SYNC();
}

// One block's share of a pass over one prime's transform `a` (N words);
// `tab` is that prime's table (`offset`: where the transform starts in a and
// b). Every loop below runs t or u from `thread` in steps of `threads` (a
// power of two), between block barriers; the host model runs each thread's
// share in turn (EACH_THREAD).
// Indices are 32-bit: N <= 2^26 (NTT_MAX_LOG), and q is a copy, so its
// words stay in registers. LOAD, KIND and TWIST (log_s != 0: the pass
// multiplies by the twist, at the store going forward, at the load going
// back; a turn has none) are template parameters so that each pass's code
// has no branch on them per element: with them as run-time values the load
// and store phases took 84 of a 10^6-limb product's 238 instructions an
// element in a plain pass (ncu source counters, H100; RESULTS.md,
// "Transform passes").
template <int LOAD, int KIND, bool TWIST>
NTT_FN void ntt_pass_tile(u32 *a, u32 offset, const limb_t *limbs, u64 xn, const u32 *b, const u32 *tab,
                          const NttPrime &q, u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u64 block, u32 thread_id, u32 threads,
                          u32 group_log, u32 *tile) {
    static_assert(KIND != NTT_TURN || !TWIST, "a turn's passes (span 1 up) have no twist");
    constexpr bool INVERSE = KIND == NTT_INVERSE;
    constexpr bool PAD = !TWIST;  // C = 1 (tile_word)
    const u32 T = 1u << log_t;
    const u32 log_c = log_s < log_t - k ? log_s : log_t - k;
    const u32 C = 1u << log_c, G = 1u << k;
    const u32 log_o = log_t - k - log_c;
    const u32 chunks = 1u << (log_s - log_c);  // blocks per group of groups
    const u32 outer0 = (u32)(block >> (log_s - log_c)) << log_o;
    const u32 r0 = ((u32)block & (chunks - 1)) << log_c;
    const u32 log_2l = k + log_s;
    // z^bitrev(j) = w^(r * bitrev(j) * N / 2L): exponent shift.
    const u32 twist_shift = log_n - log_2l;
    // The inverse's scale, 1 / (radix N) (and Montgomery's 2^32: the
    // pointwise product leaves 2^-32), is applied once, by the inverse's
    // last pass (log_s + k = log_n): a twisted one takes it into its
    // twists, a batch's first (where each element was a product more in the
    // turn); a turn that is the whole transform applies it with the
    // pointwise product. (cugmp_ntt_sum, before plain inverse passes, does
    // what the turn does.)
    const bool last = (KIND == NTT_TURN || INVERSE) && log_s + k == log_n;
    const u32 scale = KIND == NTT_TURN || (INVERSE && TWIST) ? LDG(&tab[NTT_TABLE_LEN(log_n, h) - 1]) : 0;

    // Tile element t = (o * 2^k + j) * C + r: its place in the transform,
    // o, j and r moved to their bit fields there (before the block's
    // offsets). That is a function of t's bits one by one, so for t = x + y
    // with x and y sharing no bit it is the sum of x's and y's places. The
    // batches below take t = thread + s, thread < threads <= s's lowest bit
    // (powers of two), and compute the s part with uniform (per-block)
    // values: an add an element instead of the fields' shifts and masks.
    auto place = [&](u32 t) -> u32 {
        const u32 r = t & (C - 1), j = (t >> log_c) & (G - 1), o = t >> (log_c + k);
        return (o << log_2l) + (j << log_s) + r;
    };
    // The block's offsets in its transform (disjoint from every place).
    const u32 local0 = (outer0 << log_2l) + r0;
    // The twist's power at tile element t, z^bitrev(j) = w^(r * bitrev_k(j) *
    // N / 2L) (1 where the exponent is 0: no test for it).
    const NttPowers powers = ntt_powers(tab, log_n, h, INVERSE);
    auto twist = [&](u32 t) -> u32 {
        const u32 r = t & (C - 1), j = (t >> log_c) & (G - 1);
        return powers.at(((r0 + r) * (brev32(j) >> (32 - k))) << twist_shift, q);
    };
    // A batch's twists by products (`chained`): its elements t0 + i threads
    // (i < 8) share r where threads >= C, and where also 8 threads <= C 2^k
    // their j's are j0 + (i << a), a = log2(threads / C), with i's bits
    // below the top of j, so bitrev_k(j) = bitrev_k(j0) + bitrev_3(i) 2^(k -
    // a - 3): element i's twist is element 0's times y^bitrev_3(i), y =
    // w^((r0 + r) 2^(k - a - 3) N / 2L). Taken in the order bitrev_3(i) = 0,
    // 1, .., 7, each is the one before times y: a Montgomery product an
    // element where the tables took two loads, their index and a product.
    u32 log_threads = 0;
    while ((2u << log_threads) <= threads) log_threads++;
    const bool chained = TWIST && log_threads >= log_c && log_threads + 3 <= k + log_c;
    auto twist_ratio = [&](u32 t0) -> u32 {
        return powers.at(((r0 + (t0 & (C - 1))) << (k + log_c - log_threads - 3)) << twist_shift, q);
    };
    static_assert(NTT_BATCH == 8, "chained twists take a batch's elements in the order of bitrev_3");
    // An element from device memory, at g = offset + local0 + its place
    // (its load issued in a batch with others) ...
    const NttCoefficients coefs(limbs, xn);
    const NttLimbs whole(limbs, xn);  // NTT_LOAD_LIMBS64
    // Only transforms of 2^k points read limbs in a pass: the first set
    // (narrow or wide) for them.
    const int subtractions = ntt_subtractions(1, 0, LOAD == NTT_LOAD_LIMBS64);
    const u32 count = LOAD == NTT_LOAD_LIMBS64 ? whole.count : coefs.count;
    auto load = [&](u32 g) -> u32 {
        if (LOAD == NTT_LOAD_LIMBS64) return limb_residue(whole.at(g - offset), q, subtractions);
        return LOAD == NTT_LOAD_LIMBS ? coefs.at(g - offset) : a[g];
    };
    // ... what the pass does to it before the stages, as tile element t ...
    // (tw: its twist, where the pass has one) ...
    // (at shared word w = tile_word<PAD>(t, sh))
    auto enter_with = [&](u32 w, u32 x, u32 tw) {
        if (LOAD == NTT_LOAD_LIMBS) x = coefficient_residue(x, q, subtractions);
        if (INVERSE && TWIST) x = mont_mul(tw, x, q);  // tw below 2p (chain)
        tile[w] = x;
    };
    // (The twists of the inverse's last pass carry its scale.)
    auto scaled = [&](u32 tw) -> u32 { return INVERSE && last ? mont_mul(tw, scale, q) : tw; };
    auto enter = [&](u32 t, u32 w, u32 x) { enter_with(w, x, INVERSE && TWIST ? scaled(twist(t)) : 0); };
    // ... and back to device memory after them.
    auto leave_with = [&](u32 w, u32 g, u32 tw) {
        u32 x = tile[w];
        if (!INVERSE && TWIST) x = mont_mul(tw, x, q);  // tw below 2p (chain)
        a[g] = x;
    };
    auto leave = [&](u32 t, u32 w, u32 g) { leave_with(w, g, !INVERSE && TWIST ? twist(t) : 0); };
    // A batch's elements with their twists where they are chained (element
    // i gets tw, from twist and twist_ratio, in the order bitrev_3(i) = 0, 1,
    // .., 7). The ratio depends on t0's r alone, which is the thread's own
    // (threads >= C, and a thread's batches lie multiples of threads apart):
    // taken from `thread`, it is computed once a thread, not once a batch.
    auto chain = [&](u32 t0, u32 thread, auto &&each) {
        u32 tw = scaled(twist(t0));
        const u32 y = twist_ratio(thread);
#pragma unroll
        for (int o = 0; o < NTT_BATCH; o++) {
            if (o) tw = mont_mul_lazy(tw, y, q);  // below 2p: only a first factor
            each(((o & 1) << 2) | (o & 2) | (o >> 2), tw);  // i = bitrev_3(o)
        }
    };
    // NTT_BATCH elements a thread at a time, every load of the batch issued
    // before the first is used: with one element per loop iteration the
    // passes waited on device-memory latency (22 ms for a 10^7-limb product
    // on the H200, most of it in these two loops). Tiles and block sizes are
    // powers of two, so a tile is either whole batches for every thread or
    // (small transforms) less than one: no bounds test in the batches.
    // So each thread's elements, for both phases: batch(t0, w0, g0, thread)
    // for each of its batches (element i at tile index t0 + i * threads,
    // shared word w0 + i * stride, in a at g0 + lead[i]), or one(t, w, g)
    // for each element (w its shared word, g its index in a). The block's
    // offsets go into g0 once a batch. (Padded, batches take a multiple of
    // 64 threads, so that their words are sums: tile_word.)
    const bool batches = T >= NTT_BATCH * threads && (!PAD || threads % 64 == 0);
    // place(i * threads) for each element i of a batch, the same for every
    // batch: the compiler kept its three fields apart and re-added them for
    // every element of every batch (three adds an element where one does).
    u32 lead[NTT_BATCH];
#pragma unroll
    for (int i = 0; i < NTT_BATCH; i++) {
        lead[i] = place(i * threads);
        NTT_OPAQUE32(lead[i]);
    }
    // The padding's shift (tile_word): by where the steps start.
    const u32 sh = ntt_bottom_stages(k, group_log, log_c) ? 5 : 6;
    const u32 stride = tile_word<PAD>(threads, sh);
    // (Tile elements below `end`.)
    auto each_element = [&](auto &&batch, auto &&one, u32 end) {
        EACH_THREAD(thread) {
            const u32 mine = offset + local0 + place(thread);
            if (batches) {
                u32 w0 = tile_word<PAD>(thread, sh);
                for (u32 s0 = 0; s0 < end; s0 += NTT_BATCH * threads, w0 += NTT_BATCH * stride)
                    batch(thread + s0, w0, mine + place(s0), thread);
            } else {
                for (u32 t = thread; t < end; t += threads) one(t, tile_word<PAD>(t, sh), offset + local0 + place(t));
            }
        }
    };
    // A transform's first forward pass of more than one step whose operand
    // lies in the transform's lower half (count <= N / 2: the balanced
    // products): its groups' elements j >= 2^(k-1) are past the operand,
    // zero, and they are the tile's upper half (the pass's first, so C = T /
    // 2^k and a tile is one group of groups). The load phase leaves them
    // out, and the first step's groups (ntt_group's HALF) neither read them
    // nor add them (RESULTS.md, "Primes on lanes").
    const bool half = KIND == NTT_FORWARD && LOAD != NTT_LOAD_PLAIN && TWIST && log_s + k == log_n &&
                      count <= (1u << (log_n - 1)) && group_log == NTT_GROUP_LOG && k > NTT_GROUP_LOG;
    const u32 load_end = half && (!batches || (T / 2) % (NTT_BATCH * threads) == 0) ? T / 2 : T;
    each_element(
        [&](u32 t0, u32 w0, u32 g0, u32 thread) {
            u32 v[NTT_BATCH];
            // From limbs, a batch (its places increase with i) lies below the
            // operand's coefficients, above them, or across their end: a test
            // a batch where each element took its own.
            const u32 c0 = g0 - offset, c1 = c0 + lead[NTT_BATCH - 1];
            if (LOAD == NTT_LOAD_LIMBS && c1 < count) {
#pragma unroll
                for (int i = 0; i < NTT_BATCH; i++) v[i] = LDG(&coefs.words[c0 + lead[i]]);
            } else if (LOAD == NTT_LOAD_LIMBS64 && c1 < count) {
                u64 y[NTT_BATCH];
#pragma unroll
                for (int i = 0; i < NTT_BATCH; i++) y[i] = LDG(&whole.words[c0 + lead[i]]);
#pragma unroll
                for (int i = 0; i < NTT_BATCH; i++) v[i] = limb_residue(y[i], q, subtractions);
            } else if (LOAD != NTT_LOAD_PLAIN && c0 >= count) {
#pragma unroll
                for (int i = 0; i < NTT_BATCH; i++) v[i] = 0;
            } else {
#pragma unroll
                for (int i = 0; i < NTT_BATCH; i++) v[i] = load(g0 + lead[i]);
            }
            if (INVERSE && chained) {
                chain(t0, thread, [&](int i, u32 tw) { enter_with(w0 + i * stride, v[i], tw); });
            } else {
#pragma unroll
                for (int i = 0; i < NTT_BATCH; i++) enter(t0 + i * threads, w0 + i * stride, v[i]);
            }
        },
        [&](u32 t, u32 w, u32 g) { enter(t, w, load(g)); }, load_end);
    BLOCK_SYNC();

    if (KIND != NTT_TURN) {
        ntt_steps<INVERSE, PAD>(tile, T, log_c, k, group_log, tab, q, thread_id, threads, sh, false, half);
    } else {
        // The forward's stages, the pointwise product (each element times
        // the other operand's at the same place, b = a: itself, a square;
        // scaled where the turn is the whole transform, `last`) and the
        // inverse's stages; the bottom steps and the product between them
        // in one (ntt_turn_bottom). A turn has C = 1, so tile element t lies
        // at place t: b's at offset + local0 + t.
        ntt_steps<false, PAD>(tile, T, log_c, k, group_log, tab, q, thread_id, threads, sh, true);
        ntt_turn_bottom<PAD>(tile, T, k, group_log, tab, q, thread_id, threads, sh, b == a ? nullptr : b + offset + local0,
                             last, scale);
        ntt_steps<true, PAD>(tile, T, log_c, k, group_log, tab, q, thread_id, threads, sh, true);
    }

    each_element(
        [&](u32 t0, u32 w0, u32 g0, u32 thread) {
            if (!INVERSE && chained) {
                chain(t0, thread, [&](int i, u32 tw) { leave_with(w0 + i * stride, g0 + lead[i], tw); });
            } else {
#pragma unroll
                for (int i = 0; i < NTT_BATCH; i++) leave(t0 + i * threads, w0 + i * stride, g0 + lead[i]);
            }
        },
        leave, T);
}

// A pass (ntt_pass_tile) with its template parameters from the run-time
// ones: `kind` (NTT_FORWARD, NTT_INVERSE, NTT_TURN). A forward pass or a
// turn reads limbs when it is given them (the transform's first pass); a
// turn multiplies by b (b = a: squares). LIMBS: how a pass that reads limbs
// cuts them (NTT_LOAD_LIMBS64: the wide sets' kernel, which takes only such
// passes; the others are the same for every set).
template <int LIMBS = NTT_LOAD_LIMBS>
NTT_FN void ntt_pass_block(u32 *a, u32 offset, const limb_t *limbs, u64 xn, const u32 *b, const u32 *tab, const NttPrime q,
                           u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u32 kind,
                           u64 block, u32 thread, u32 threads, u32 group_log, u32 *tile) {
    const bool twist = log_s != 0;
    const int mode = kind == NTT_TURN ? (limbs ? 9 : 8) : kind == NTT_INVERSE ? 4 : (limbs ? 2 : 0);
#define NTT_PASS_CASE(M, LOAD, KIND, TWIST)                                                                       \
    case M:                                                                                                       \
        if constexpr (LIMBS == NTT_LOAD_LIMBS || LOAD != NTT_LOAD_PLAIN)                                          \
            ntt_pass_tile<LOAD, KIND, TWIST>(a, offset, limbs, xn, b, tab, q, log_n, h, log_t, log_s, k, block,  \
                                             thread, threads, group_log, tile);                                   \
        break;
    switch (mode + (kind == NTT_TURN ? 0 : twist)) {
        NTT_PASS_CASE(0, NTT_LOAD_PLAIN, NTT_FORWARD, false)
        NTT_PASS_CASE(1, NTT_LOAD_PLAIN, NTT_FORWARD, true)
        NTT_PASS_CASE(2, LIMBS, NTT_FORWARD, false)
        NTT_PASS_CASE(3, LIMBS, NTT_FORWARD, true)
        NTT_PASS_CASE(4, NTT_LOAD_PLAIN, NTT_INVERSE, false)
        NTT_PASS_CASE(5, NTT_LOAD_PLAIN, NTT_INVERSE, true)
        NTT_PASS_CASE(8, NTT_LOAD_PLAIN, NTT_TURN, false)
        NTT_PASS_CASE(9, LIMBS, NTT_TURN, false)
    }
#undef NTT_PASS_CASE
}
