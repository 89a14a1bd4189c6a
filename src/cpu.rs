//! The CPU engine at GMP's `mpn` level: limb slices in, limb slices out,
//! computed by the embedded GMP. It serves every operation the GPU does
//! not take, finishes every GPU failure, and is the reference the GPU's
//! results are checked against (`CUGMP_CHECK=1`, the self-test).
//!
//! [`gf2x`]: products of binary polynomials (carry-less), its own code.
//! [`ifma`]: schoolbook products on AVX-512 IFMA, put in the embedded GMP's
//! place for its own small products where they are faster.
//!
//! [`mpz_mul`], [`mpz_add`], [`mpz_sub`], [`mpz_mul_ui`] and its kin,
//! [`mpz_set`], [`mpz_neg`], [`mpz_abs`]: GMP's, made here for operands of
//! a few limbs, and the sums of unlike lengths for any.
//!
//! It may use the ground floor (`gmp`) and the leaves; it knows nothing of
//! the GPU or of routing.

pub mod gf2x;
pub mod ifma;

use crate::gmp::{embedded, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use crate::{helpers, parallel};
use libc::{c_int, c_long, c_ulong};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// The largest operand, in limbs, that [`mpz_mul`] multiplies itself.
const SMALL_LIMBS: u32 = 4;

/// GMP's `mpz_mul`, the same result, room and sign to the bit, made here
/// where both operands have 1 to 4 limbs: there most of GMP's time is its
/// general path (aliasing checks, a call to mpn_mul and its size
/// dispatch), and unrolled here the call is 1.1x to 1.9x GMP's speed where
/// through GMP it was 0.82x to 1.29x (RESULTS.md, "Products of a few
/// limbs"); and up to 16 limbs, below GMP's Karatsuba sizes, by GMP's
/// schoolbook loop without that path ([`schoolbook`]).
///
/// # Safety
/// As GMP's: `r`, `a`, `b` initialised, `r` possibly one of them.
#[inline(always)]
pub unsafe fn mpz_mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe { by_shape(&PRODUCTS, schoolbook_or_gmps, r, a, b) }
}

/// The longest operand [`schoolbook`] takes.
const SCHOOLBOOK_LIMBS: u32 = 16;

/// GMP's Karatsuba threshold for this processor (its dispatch table's),
/// once read; 0 before.
static KARATSUBA_FROM: AtomicU32 = AtomicU32::new(0);

/// A product outside the 16 shapes: [`schoolbook`]'s where both operands
/// have 3 to [`SCHOOLBOOK_LIMBS`] limbs (GMP's path for one or two limbs
/// against more is a single-row loop, in place where r is the longer), the
/// shorter is below GMP's Karatsuba threshold (GMP's `mpz_mul` would run
/// its schoolbook loop too) and they are not one number (GMP squares
/// those), else GMP's.
#[inline(always)]
unsafe extern "C" fn schoolbook_or_gmps(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (an, bn) = ((*a)._mp_size.unsigned_abs(), (*b)._mp_size.unsigned_abs());
        if an.wrapping_sub(3) < SCHOOLBOOK_LIMBS - 2 && bn.wrapping_sub(3) < SCHOOLBOOK_LIMBS - 2 && (*a)._mp_d != (*b)._mp_d {
            match KARATSUBA_FROM.load(Relaxed) {
                // A tail jump, so that the exports' common path saves no
                // registers.
                0 => first_schoolbook(r, a, b),
                from if an.min(bn) < from => schoolbook(r, a, b),
                _ => embedded::mpz_mul(r, a, b),
            }
        } else {
            embedded::mpz_mul(r, a, b)
        }
    }
}

/// [`KARATSUBA_FROM`] read from GMP's table, then the product.
#[cold]
#[inline(never)]
unsafe extern "C" fn first_schoolbook(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    // At least 1: 1 takes no product here.
    let from = crate::gmp::dispatch::mul_toom22_threshold().clamp(1, u32::MAX as usize) as u32;
    KARATSUBA_FROM.store(from, Relaxed);
    unsafe { schoolbook_or_gmps(r, a, b) }
}

/// `r = a b` where both have 3 to [`SCHOOLBOOK_LIMBS`] limbs and are not
/// one number: GMP's `mpz_mul` for these sizes step for step (a new
/// block of the product's size where r has too little room, an operand
/// that is r copied aside first, its schoolbook loop through GMP's
/// dispatch table, the top limb dropped where it is zero), without its
/// general path's checks and calls (`mpn_mul`, its size dispatch,
/// cuGMP's hook on it), with which these products took 0.85x to 0.95x
/// the reference's speed on the build machine (RESULTS.md, "Products of
/// a few limbs").
#[inline(never)]
unsafe extern "C" fn schoolbook(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (mut u, mut v) = (a, b);
        let negative = ((*a)._mp_size ^ (*b)._mp_size) < 0;
        let (mut un, mut vn) = ((*u)._mp_size.unsigned_abs() as usize, (*v)._mp_size.unsigned_abs() as usize);
        if un < vn {
            std::mem::swap(&mut u, &mut v);
            std::mem::swap(&mut un, &mut vn);
        }
        let n = un + vn;
        let (mut up, mut vp) = ((*u)._mp_d as *const mp_limb_t, (*v)._mp_d as *const mp_limb_t);
        if ((*r)._mp_alloc as usize) < n {
            return grown_schoolbook(r, (up, un), (vp, vn), negative);
        }
        let wp = (*r)._mp_d;
        // The loop writes w apart from both operands: the one that is r
        // (u and v are not one number) copied aside.
        let mut aside = [const { MaybeUninit::<mp_limb_t>::uninit() }; SCHOOLBOOK_LIMBS as usize];
        if std::ptr::eq(wp, up) {
            up = copy_aside(&mut aside, up, un);
        } else if std::ptr::eq(wp, vp) {
            vp = copy_aside(&mut aside, vp, vn);
        }
        embedded::mpn_mul_basecase(wp, up, un as mp_size_t, vp, vn as mp_size_t);
        // Top limbs nonzero: the product has n - 1 limbs at least.
        let size = (n - usize::from(*wp.add(n - 1) == 0)) as c_int;
        (*r)._mp_size = if negative { -size } else { size };
    }
}

/// [`schoolbook`]'s product where r has too little room, as GMP's
/// `mpz_mul` makes it: into a new block of exactly the product's size
/// (apart from both operands), which r then takes, its old block freed.
#[cold]
#[inline(never)]
unsafe fn grown_schoolbook(r: mpz_ptr, (up, un): (*const mp_limb_t, usize), (vp, vn): (*const mp_limb_t, usize), negative: bool) {
    let n = un + vn;
    let mut fresh = crate::gmp::mpz::FreshLimbs::allocated(n);
    unsafe {
        embedded::mpn_mul_basecase(fresh.limbs().as_mut_ptr(), up, un as mp_size_t, vp, vn as mp_size_t);
        fresh.give_to(r, n, negative);
    }
}

/// `n` <= [`SCHOOLBOOK_LIMBS`] limbs from `from` into `to`, one by one
/// (the compiler would make a call of the C library's copy of a loop,
/// more than these few limbs take): where they now are.
#[inline(always)]
unsafe fn copy_aside(to: &mut [MaybeUninit<mp_limb_t>; SCHOOLBOOK_LIMBS as usize], from: *const mp_limb_t, n: usize) -> *const mp_limb_t {
    for (k, limb) in to.iter_mut().enumerate().take(n) {
        // SAFETY: the caller's: n limbs readable at from.
        limb.write(unsafe { std::ptr::read_volatile(from.add(k)) });
    }
    to.as_ptr().cast()
}

type Shape = unsafe extern "C" fn(mpz_ptr, mpz_srcptr, mpz_srcptr);

/// The 16 shapes' instances of `$f` (and its further parameter), in
/// [`small_shape`]'s order.
macro_rules! shapes {
    ($f:ident $(, $extra:expr)?) => {
        [
            $f::<1, 1 $(, $extra)?>,
            $f::<1, 2 $(, $extra)?>,
            $f::<1, 3 $(, $extra)?>,
            $f::<1, 4 $(, $extra)?>,
            $f::<2, 1 $(, $extra)?>,
            $f::<2, 2 $(, $extra)?>,
            $f::<2, 3 $(, $extra)?>,
            $f::<2, 4 $(, $extra)?>,
            $f::<3, 1 $(, $extra)?>,
            $f::<3, 2 $(, $extra)?>,
            $f::<3, 3 $(, $extra)?>,
            $f::<3, 4 $(, $extra)?>,
            $f::<4, 1 $(, $extra)?>,
            $f::<4, 2 $(, $extra)?>,
            $f::<4, 3 $(, $extra)?>,
            $f::<4, 4 $(, $extra)?>,
        ]
    };
}

/// [`mpz_mul`]'s product for each shape, at [`small_shape`]'s index. A
/// function each, of the C ABI, which cannot unwind: the exported
/// `mpz_mul` reaches it by one indirect tail jump, as it reaches GMP's,
/// and each saves only the registers its shape uses.
static PRODUCTS: [Shape; 16] = shapes!(shape);

/// `r = a b` where `a` has A limbs and `b` B (1 to 4 each), by
/// schoolbook. Where r has room for fewer than A + B limbs, [`grow`] first,
/// reached by a tail jump: the common path keeps no register across a
/// call.
#[inline(never)]
unsafe extern "C" fn shape<const A: usize, const B: usize>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let n = A + B;
        if ((*r)._mp_alloc as usize) < n {
            return grow::<A, B>(r, a, b);
        }
        // r may be a or b: the operands are read before r is written.
        let x: [mp_limb_t; A] = std::ptr::read_unaligned((*a)._mp_d as *const [mp_limb_t; A]);
        let y: [mp_limb_t; B] = std::ptr::read_unaligned((*b)._mp_d as *const [mp_limb_t; B]);
        let negative = ((*a)._mp_size ^ (*b)._mp_size) < 0;
        let mut p = [0 as mp_limb_t; 8];
        for i in 0..A {
            let mut carry: mp_limb_t = 0;
            for j in 0..B {
                let t = x[i] as u128 * y[j] as u128 + p[i + j] as u128 + carry as u128;
                p[i + j] = t as mp_limb_t;
                carry = (t >> 64) as mp_limb_t;
            }
            p[i + B] = carry;
        }
        std::ptr::copy_nonoverlapping(p.as_ptr(), (*r)._mp_d, n);
        // Top limbs nonzero: the product has n - 1 limbs at least.
        let size = (n - usize::from(p[n - 1] == 0)) as c_int;
        (*r)._mp_size = if negative { -size } else { size };
    }
}

/// r's room grown to A + B limbs exactly, as GMP's `mpz_mul` grows it (its
/// limbs kept: r may be an operand, whose limbs then move with it), then
/// the product.
#[cold]
#[inline(never)]
unsafe extern "C" fn grow<const A: usize, const B: usize>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        crate::gmp::mpz::realloc(r, (A + B) as mp_size_t);
        shape::<A, B>(r, a, b)
    }
}

/// GMP's `mpz_add`, made here as [`mpz_mul`] makes its products: for
/// operands of 1 to 4 limbs, a function for each shape, for operands as
/// long, 5 to 32 limbs, one for each length ([`wide_sum`]), and for
/// operands of unlike lengths one more ([`long_sum`]); the same result,
/// room and sign as GMP's (RESULTS.md, "Products of a few limbs", "Sums
/// of unlike lengths"). Longer operands as long are GMP's.
///
/// # Safety
/// As GMP's: `r`, `a`, `b` initialised, `r` possibly one of them.
#[inline(always)]
pub unsafe fn mpz_add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe { by_shape(&SUMS, wide_or_long::<false>, r, a, b) }
}

/// GMP's `mpz_sub`, as [`mpz_add`].
///
/// # Safety
/// As GMP's: `r`, `a`, `b` initialised, `r` possibly one of them.
#[inline(always)]
pub unsafe fn mpz_sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe { by_shape(&DIFFERENCES, wide_or_long::<true>, r, a, b) }
}

/// GMP's `mpz_set`, made here where r has room for a's limbs (nothing to
/// allocate): up to 16 limbs by 16-byte moves, where GMP's calls its copy
/// loop through its dispatch table. Longer operands, and a growth, are
/// GMP's (RESULTS.md, "Products of a few limbs", "Sums of unlike
/// lengths").
///
/// # Safety
/// As GMP's: `r`, `a` initialised, `r` possibly `a`.
#[inline(always)]
pub unsafe fn mpz_set(r: mpz_ptr, a: mpz_srcptr) {
    unsafe { short_copy(r, a, (*a)._mp_size, embedded::mpz_set) }
}

/// GMP's `mpz_neg`, as [`mpz_set`] up to 16 limbs; longer, GMP's.
///
/// # Safety
/// As GMP's: `r`, `a` initialised, `r` possibly `a`.
#[inline(always)]
pub unsafe fn mpz_neg(r: mpz_ptr, a: mpz_srcptr) {
    unsafe { short_copy(r, a, (*a)._mp_size.wrapping_neg(), embedded::mpz_neg) }
}

/// GMP's `mpz_abs`, as [`mpz_neg`].
///
/// # Safety
/// As GMP's: `r`, `a` initialised, `r` possibly `a`.
#[inline(always)]
pub unsafe fn mpz_abs(r: mpz_ptr, a: mpz_srcptr) {
    unsafe { short_copy(r, a, (*a)._mp_size.wrapping_abs(), embedded::mpz_abs) }
}

/// r = a's limbs with the size `size` where a has up to 16 limbs and r
/// room for them: [`copy_rest`]'s moves (r = a copies nothing). Else
/// `long`, which grows r as GMP does. (Beyond 16 limbs GMP's own
/// functions were as fast or faster than a copy of ours behind this
/// check: RESULTS.md, "Sums of unlike lengths".)
#[inline(always)]
unsafe fn short_copy(r: mpz_ptr, a: mpz_srcptr, size: c_int, long: unsafe extern "C" fn(mpz_ptr, mpz_srcptr)) {
    unsafe {
        let n = (*a)._mp_size.unsigned_abs();
        if n > 16 || n > (*r)._mp_alloc as u32 {
            return long(r, a);
        }
        if r.cast_const() != a {
            // Two numbers' limbs are apart.
            copy_rest((*r)._mp_d, (*a)._mp_d, n as usize);
        }
        (*r)._mp_size = size;
    }
}

/// `table`'s function for the operands' shape, else GMP's `gmps`.
#[inline(always)]
unsafe fn by_shape(table: &[Shape; 16], gmps: Shape, r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        match small_shape(a, b) {
            // small_shape's index is below 16.
            Some(k) => table.get_unchecked(k)(r, a, b),
            None => gmps(r, a, b),
        }
    }
}

/// A sum or difference outside the 16 shapes: [`wide_sum`]'s where both
/// operands have 5 to 32 limbs, GMP's where they are as long otherwise
/// (GMP's loop over many limbs, the call's cost a small part), else
/// [`long_sum`]'s.
#[inline(always)]
unsafe extern "C" fn wide_or_long<const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (table, gmps): (&[Shape; WIDE_LENGTHS], Shape) = if SUB { (&WIDE_DIFFERENCES, embedded::mpz_sub) } else { (&WIDE_SUMS, embedded::mpz_add) };
        match wide_length(a, b) {
            // wide_length's index is below WIDE_LENGTHS.
            Some(k) => table.get_unchecked(k)(r, a, b),
            None if (*a)._mp_size.unsigned_abs() == (*b)._mp_size.unsigned_abs() => gmps(r, a, b),
            None => long_sum::<SUB>(r, a, b),
        }
    }
}

/// `r = a + b`, or `a - b` for SUB, of unlike lengths, as GMP's aors.h
/// makes it: the room grown to the longer operand's size and one, the
/// shorter operand's limbs added to the longer's or taken from them (the
/// result has the longer's sign where the signs differ), the carry or
/// borrow through the longer's next limbs, then its rest copied. GMP's
/// own `mpz_add` and `mpz_sub` copy that rest by a loop of their C code
/// whose speed depends on where the link places it: in libcugmp.so
/// `mpz_sub`'s straddles a 64-byte line and took 2x the reference's time
/// on Zen 3 (RESULTS.md, "Sums of unlike lengths"); here
/// [`copy_rest`]'s.
#[inline(never)]
unsafe extern "C" fn long_sum<const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        // GMP's names: u the longer operand, v the other, with its sign
        // turned for a difference.
        let (a_size, b_size) = ((*a)._mp_size, if SUB { (*b)._mp_size.wrapping_neg() } else { (*b)._mp_size });
        let (u, v, u_size, v_size) = if a_size.unsigned_abs() > b_size.unsigned_abs() { (a, b, a_size, b_size) } else { (b, a, b_size, a_size) };
        let (un, vn) = (u_size.unsigned_abs() as usize, v_size.unsigned_abs() as usize);
        debug_assert!(un > vn, "long_sum takes operands of unlike lengths");
        if ((*r)._mp_alloc as usize) <= un {
            crate::gmp::mpz::realloc(r, (un + 1) as mp_size_t);
        }
        // Read after the growth: r may be u or v.
        let (wp, up, vp) = ((*r)._mp_d, (*u)._mp_d as *const mp_limb_t, (*v)._mp_d as *const mp_limb_t);
        let size = if (u_size ^ v_size) >= 0 {
            let carry = add_longer(wp, up, un, vp, vn);
            *wp.add(un) = carry;
            un + carry as usize
        } else {
            subtract_longer(wp, up, un, vp, vn)
        };
        // size <= un + 1, and un + 1 limbs fit r's room, a c_int.
        let size = size as c_int;
        (*r)._mp_size = if u_size < 0 { -size } else { size };
    }
}

/// GMP's `mpn_add`: `w = u + v` over u's `un` limbs where v has `vn <= un`;
/// the carry out. w is u, or apart from it; it may be v.
#[inline(always)]
unsafe fn add_longer(wp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize) -> mp_limb_t {
    unsafe {
        let carry = vn != 0 && sum_chain::<false>(wp, up, vp, vn) != 0;
        carry_from(wp, up, un, vn, carry)
    }
}

/// GMP's `mpn_sub`: `w = u - v` over u's `un` limbs where v has `vn < un`
/// limbs (u's top limb not zero, so no borrow leaves it); the size of w.
/// w is u, or apart from it; it may be v.
#[inline(always)]
unsafe fn subtract_longer(wp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize) -> usize {
    unsafe {
        let borrow = vn != 0 && sum_chain::<true>(wp, up, vp, vn) != 0;
        borrow_from(wp, up, un, vn, borrow)
    }
}

/// The rest of `w = u + ...` from limb `k` of u's `n` limbs: the carry
/// into limb k through the next limbs, then u's rest copied where w is
/// apart from u; the carry out of the top.
#[inline(always)]
unsafe fn carry_from(wp: *mut mp_limb_t, up: *const mp_limb_t, n: usize, mut k: usize, carry: bool) -> mp_limb_t {
    unsafe {
        if carry {
            loop {
                if k == n {
                    return 1;
                }
                let limb = (*up.add(k)).wrapping_add(1);
                *wp.add(k) = limb;
                k += 1;
                if limb != 0 {
                    break;
                }
            }
        }
        if wp.cast_const() != up {
            copy_rest(wp.add(k), up.add(k), n - k);
        }
        0
    }
}

/// The rest of `w = u - ...` from limb `k` of u's `n` limbs (the top one
/// not zero, and u the larger magnitude): the borrow into limb k through
/// the next limbs, then u's rest copied where w is apart from u; the size
/// of w.
#[inline(always)]
unsafe fn borrow_from(wp: *mut mp_limb_t, up: *const mp_limb_t, n: usize, mut k: usize, borrow: bool) -> usize {
    unsafe {
        if borrow {
            while k < n {
                let limb = *up.add(k);
                *wp.add(k) = limb.wrapping_sub(1);
                k += 1;
                if limb != 0 {
                    break;
                }
            }
        }
        if k == n {
            // The top limb was written here, and may be zero.
            return normalized(wp, n);
        }
        // u's top limb is w's, untouched: w is not read back, since a
        // load from limbs the C library's wide stores just wrote waits for
        // them (3x GMP's time at 12 and 6 limbs on Zen 3;
        // RESULTS.md, "Sums of unlike lengths").
        if wp.cast_const() != up {
            copy_rest(wp.add(k), up.add(k), n - k);
        }
        n
    }
}

/// `n` limbs from `from` to `to`, apart: up to 16 by 16-byte moves (the
/// first and the last bytes, overlapping in the middle, as the C
/// library's `memcpy` copies short blocks, without its call), more by
/// `memcpy`, and from [`COPY_LOOP_FROM`] limbs by GMP's `mpn_copyi`.
#[inline(always)]
unsafe fn copy_rest(to: *mut mp_limb_t, from: *const mp_limb_t, n: usize) {
    use std::ptr::{read_unaligned as load, write_unaligned as store};
    unsafe {
        let (t, f) = (to as *mut u128, from as *const u128);
        // `end(p, k)`: the 16-byte word k counted back from the end of
        // the n limbs at p (it starts 2 (k + 1) limbs before that end).
        let end = |p: *const u128, k: usize| p.cast::<mp_limb_t>().add(n - 2 * (k + 1)).cast::<u128>();
        let end_mut = |p: *mut u128, k: usize| p.cast::<mp_limb_t>().add(n - 2 * (k + 1)).cast::<u128>();
        match n {
            0 => {}
            1 => *to = *from,
            2..=4 => {
                let (x, y) = (load(f), load(end(f, 0)));
                store(t, x);
                store(end_mut(t, 0), y);
            }
            5..=8 => {
                let (x0, x1, y1, y0) = (load(f), load(f.add(1)), load(end(f, 1)), load(end(f, 0)));
                store(t, x0);
                store(t.add(1), x1);
                store(end_mut(t, 1), y1);
                store(end_mut(t, 0), y0);
            }
            9..=16 => {
                let x = [load(f), load(f.add(1)), load(f.add(2)), load(f.add(3))];
                let y = [load(end(f, 3)), load(end(f, 2)), load(end(f, 1)), load(end(f, 0))];
                for (k, x) in x.into_iter().enumerate() {
                    store(t.add(k), x);
                }
                for (k, y) in y.into_iter().enumerate() {
                    store(end_mut(t, 3 - k), y);
                }
            }
            ..COPY_LOOP_FROM => std::ptr::copy_nonoverlapping(from, to, n),
            // n fits an mp_size_t: it counts an mpz_t's limbs.
            _ => embedded::mpn_copyi(to, from, n as mp_size_t),
        }
    }
}

/// From how many limbs [`copy_rest`] takes GMP's `mpn_copyi` over the C
/// library's `memcpy`: on the build machine's Zen 4 `memcpy` took 0.73x
/// the time of GMP's loop at 100 limbs and 1.13x at 1000 (RESULTS.md,
/// "Sums of unlike lengths").
const COPY_LOOP_FROM: usize = 256;

/// `w = u + v`, or `u - v` for SUB, over `n` limbs (not 0), the carry or
/// borrow out: [`CHAINS`]' straight run of `adc` or `sbb` up to 32 limbs
/// (no call into GMP's dispatch and loop), else GMP's `mpn_add_n` or
/// `mpn_sub_n`.
#[inline(always)]
unsafe fn sum_chain<const SUB: bool>(w: *mut mp_limb_t, u: *const mp_limb_t, v: *const mp_limb_t, n: usize) -> mp_limb_t {
    unsafe {
        let table = if SUB { &BORROW_CHAINS } else { &CHAINS };
        match table.get(n.wrapping_sub(1)) {
            Some(chain) => chain(w, u, v),
            None if SUB => embedded::mpn_sub_n(w, u, v, n as mp_size_t),
            None => embedded::mpn_add_n(w, u, v, n as mp_size_t),
        }
    }
}

/// `n` less w's zero limbs at the top.
#[inline(always)]
unsafe fn normalized(wp: *const mp_limb_t, mut n: usize) -> usize {
    while n > 0 && unsafe { *wp.add(n - 1) } == 0 {
        n -= 1;
    }
    n
}

/// `table`'s function for a's length, 1 to [`TABLED_WITH_LIMB`] limbs, else
/// (zero among them) `long`: one comparison, as where the table had the
/// four short lengths only (a second one cost 1.2 ns a call at 5 limbs
/// on the build machine; RESULTS.md, "Sums of unlike lengths").
#[inline(always)]
unsafe fn by_length(table: &[WithLimb; TABLED_WITH_LIMB], long: WithLimb, r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe {
        match table.get(((*a)._mp_size.unsigned_abs() as usize).wrapping_sub(1)) {
            Some(f) => f(r, a, v),
            None => long(r, a, v),
        }
    }
}

/// (A - 1) 4 + B - 1 where `a` has A limbs and `b` B, both 1 to 4; else
/// none (zero wraps past the bound: GMP's own).
#[inline(always)]
unsafe fn small_shape(a: mpz_srcptr, b: mpz_srcptr) -> Option<usize> {
    unsafe {
        let (i, j) = ((*a)._mp_size.unsigned_abs().wrapping_sub(1), (*b)._mp_size.unsigned_abs().wrapping_sub(1));
        (i < SMALL_LIMBS && j < SMALL_LIMBS).then_some((i * SMALL_LIMBS + j) as usize)
    }
}

/// [`mpz_add`]'s and [`mpz_sub`]'s functions, indexed as [`PRODUCTS`].
static SUMS: [Shape; 16] = shapes!(sum, false);
static DIFFERENCES: [Shape; 16] = shapes!(sum, true);

/// `r = a + b`, or `a - b` for SUB, where `a` has A limbs and `b` B (1 to
/// 4 each), as GMP's aors.h makes it: the room grown to the longer
/// operand's size and one first ([`grow_sum`], reached by a tail jump),
/// the shorter operand's magnitude added to the longer's where the signs
/// agree, else the smaller magnitude taken from the larger, whose sign the
/// result has.
#[inline(never)]
unsafe extern "C" fn sum<const A: usize, const B: usize, const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let m = if A >= B { A } else { B };
        if ((*r)._mp_alloc as usize) <= m {
            return grow_sum::<A, B, SUB>(r, a, b);
        }
        // r may be a or b: the operands are read before r is written.
        let mut x = [0 as mp_limb_t; 4];
        let mut y = [0 as mp_limb_t; 4];
        std::ptr::copy_nonoverlapping((*a)._mp_d, x.as_mut_ptr(), A);
        std::ptr::copy_nonoverlapping((*b)._mp_d, y.as_mut_ptr(), B);
        let a_negative = (*a)._mp_size < 0;
        let b_negative = ((*b)._mp_size < 0) != SUB;
        let mut s = [0 as mp_limb_t; 5];
        let (size, negative) = if a_negative == b_negative {
            let mut carry = false;
            for k in 0..m {
                let (t, c1) = x[k].overflowing_add(y[k]);
                let (t, c2) = t.overflowing_add(mp_limb_t::from(carry));
                s[k] = t;
                carry = c1 | c2;
            }
            s[m] = mp_limb_t::from(carry);
            (m + usize::from(carry), a_negative)
        } else {
            // The larger magnitude: the longer operand, else the first
            // limb from the top where they differ.
            let a_larger = if A != B { A > B } else { (0..m).rev().find(|&k| x[k] != y[k]).is_some_and(|k| x[k] > y[k]) };
            let (big, small, negative) = if a_larger { (&x, &y, a_negative) } else { (&y, &x, b_negative) };
            let mut borrow = false;
            for k in 0..m {
                let (t, b1) = big[k].overflowing_sub(small[k]);
                let (t, b2) = t.overflowing_sub(mp_limb_t::from(borrow));
                s[k] = t;
                borrow = b1 | b2;
            }
            (m - s[..m].iter().rev().take_while(|&&l| l == 0).count(), negative)
        };
        std::ptr::copy_nonoverlapping(s.as_ptr(), (*r)._mp_d, m + 1);
        // size <= 5.
        let size = size as c_int;
        (*r)._mp_size = if negative { -size } else { size };
    }
}

/// [`mpz_add`]'s and [`mpz_sub`]'s functions where both operands have 5
/// to 32 limbs, by that length less 5.
static WIDE_SUMS: [Shape; WIDE_LENGTHS] = wide_sums!(false);
static WIDE_DIFFERENCES: [Shape; WIDE_LENGTHS] = wide_sums!(true);

/// How many lengths [`wide_sum`] takes: 5 to 32 limbs.
const WIDE_LENGTHS: usize = 28;

/// [`wide_sum`]'s 28 lengths.
macro_rules! wide_sums {
    ($sub:expr) => {
        [
            wide_sum::<5, $sub>,
            wide_sum::<6, $sub>,
            wide_sum::<7, $sub>,
            wide_sum::<8, $sub>,
            wide_sum::<9, $sub>,
            wide_sum::<10, $sub>,
            wide_sum::<11, $sub>,
            wide_sum::<12, $sub>,
            wide_sum::<13, $sub>,
            wide_sum::<14, $sub>,
            wide_sum::<15, $sub>,
            wide_sum::<16, $sub>,
            wide_sum::<17, $sub>,
            wide_sum::<18, $sub>,
            wide_sum::<19, $sub>,
            wide_sum::<20, $sub>,
            wide_sum::<21, $sub>,
            wide_sum::<22, $sub>,
            wide_sum::<23, $sub>,
            wide_sum::<24, $sub>,
            wide_sum::<25, $sub>,
            wide_sum::<26, $sub>,
            wide_sum::<27, $sub>,
            wide_sum::<28, $sub>,
            wide_sum::<29, $sub>,
            wide_sum::<30, $sub>,
            wide_sum::<31, $sub>,
            wide_sum::<32, $sub>,
        ]
    };
}
use wide_sums;

/// M - 5 where `a` and `b` both have M limbs, 5 to 32; else none.
#[inline(always)]
unsafe fn wide_length(a: mpz_srcptr, b: mpz_srcptr) -> Option<usize> {
    unsafe {
        let (an, bn) = ((*a)._mp_size.unsigned_abs(), (*b)._mp_size.unsigned_abs());
        let m = an.wrapping_sub(5);
        (an == bn && (m as usize) < WIDE_LENGTHS).then_some(m as usize)
    }
}

/// As [`sum`] where both operands have M limbs (5 to 32): one chain of
/// carries or borrows through memory ([`limb_chain`]), where the
/// operands' limbs in registers would not fit. GMP's `mpz_add` behind the
/// export's checks was 0.78x to 0.93x the reference's speed at 5 to 16
/// limbs, and 0.84x to 0.91x at 17 to 30 (RESULTS.md, "Products of a few
/// limbs", "Sums of unlike lengths").
#[inline(never)]
unsafe extern "C" fn wide_sum<const M: usize, const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        if ((*r)._mp_alloc as usize) <= M {
            return grow_wide_sum::<M, SUB>(r, a, b);
        }
        let (wp, up, vp) = ((*r)._mp_d, (*a)._mp_d as *const mp_limb_t, (*b)._mp_d as *const mp_limb_t);
        let (a_negative, b_negative) = ((*a)._mp_size < 0, ((*b)._mp_size < 0) != SUB);
        let (size, negative) = if a_negative == b_negative {
            let carry = limb_chain::<M, false>(wp, up, vp);
            *wp.add(M) = carry;
            (M + carry as usize, a_negative)
        } else {
            // The larger magnitude: the first limb from the top where they
            // differ (read before r, which may be a or b, is written).
            match (0..M).rev().find(|&k| *up.add(k) != *vp.add(k)) {
                None => (0, false),
                Some(top) => {
                    let (big, small, negative) = if *up.add(top) > *vp.add(top) { (up, vp, a_negative) } else { (vp, up, b_negative) };
                    limb_chain::<M, true>(wp, big, small);
                    let mut n = top + 1;
                    while *wp.add(n - 1) == 0 {
                        n -= 1;
                    }
                    (n, negative)
                }
            }
        };
        // size <= 33.
        let size = size as c_int;
        (*r)._mp_size = if negative { -size } else { size };
    }
}

/// [`limb_chain`] for each length of 1 to 32 limbs, by that length less 1:
/// [`long_sum`]'s sums and differences over the shorter operand's limbs.
static CHAINS: [Chain; CHAIN_LENGTHS] = chains!(false);
static BORROW_CHAINS: [Chain; CHAIN_LENGTHS] = chains!(true);

/// How many lengths [`CHAINS`] has: 1 to 32 limbs.
const CHAIN_LENGTHS: usize = 32;

/// `w = u + v` (or `u - v`) over a fixed number of limbs, the carry out.
type Chain = unsafe fn(*mut mp_limb_t, *const mp_limb_t, *const mp_limb_t) -> mp_limb_t;

/// [`CHAINS`]' 32 lengths.
macro_rules! chains {
    ($sub:expr) => {
        [
            chain::<1, $sub>,
            chain::<2, $sub>,
            chain::<3, $sub>,
            chain::<4, $sub>,
            chain::<5, $sub>,
            chain::<6, $sub>,
            chain::<7, $sub>,
            chain::<8, $sub>,
            chain::<9, $sub>,
            chain::<10, $sub>,
            chain::<11, $sub>,
            chain::<12, $sub>,
            chain::<13, $sub>,
            chain::<14, $sub>,
            chain::<15, $sub>,
            chain::<16, $sub>,
            chain::<17, $sub>,
            chain::<18, $sub>,
            chain::<19, $sub>,
            chain::<20, $sub>,
            chain::<21, $sub>,
            chain::<22, $sub>,
            chain::<23, $sub>,
            chain::<24, $sub>,
            chain::<25, $sub>,
            chain::<26, $sub>,
            chain::<27, $sub>,
            chain::<28, $sub>,
            chain::<29, $sub>,
            chain::<30, $sub>,
            chain::<31, $sub>,
            chain::<32, $sub>,
        ]
    };
}
use chains;

/// [`limb_chain`] out of line, for [`CHAINS`].
#[inline(never)]
unsafe fn chain<const M: usize, const SUB: bool>(w: *mut mp_limb_t, u: *const mp_limb_t, v: *const mp_limb_t) -> mp_limb_t {
    unsafe { limb_chain::<M, SUB>(w, u, v) }
}

/// `w = u + v`, or `u - v` for SUB, over M limbs (1 to 32), the carry or
/// borrow out: `adc` or `sbb` limb after limb, each limb read before it is
/// written, so w may be u or v.
#[inline(always)]
unsafe fn limb_chain<const M: usize, const SUB: bool>(w: *mut mp_limb_t, u: *const mp_limb_t, v: *const mp_limb_t) -> mp_limb_t {
    // Elsewhere GMP's loops (the same limbs and carry).
    #[cfg(not(target_arch = "x86_64"))]
    return unsafe { if SUB { embedded::mpn_sub_n(w, u, v, M as mp_size_t) } else { embedded::mpn_add_n(w, u, v, M as mp_size_t) } };
    #[cfg(target_arch = "x86_64")]
    macro_rules! chain {
        ($step:literal; $($offset:literal)*) => {{
            let carry: mp_limb_t;
            // SAFETY: the caller's: u, v readable and w writable for M limbs.
            unsafe {
                std::arch::asm!(
                    // Clears the carry flag.
                    "xor {t:e}, {t:e}",
                    $(
                        concat!("mov {t}, [{u} + ", $offset, "]"),
                        concat!($step, " {t}, [{v} + ", $offset, "]"),
                        concat!("mov [{w} + ", $offset, "], {t}"),
                    )*
                    "sbb {t}, {t}",
                    "neg {t}",
                    u = in(reg) u, v = in(reg) v, w = in(reg) w, t = out(reg) carry,
                    options(nostack),
                );
            }
            carry
        }};
    }
    #[cfg(target_arch = "x86_64")]
    macro_rules! by_length {
        ($step:literal) => {
            match M {
                1 => chain!($step; 0),
                2 => chain!($step; 0 8),
                3 => chain!($step; 0 8 16),
                4 => chain!($step; 0 8 16 24),
                5 => chain!($step; 0 8 16 24 32),
                6 => chain!($step; 0 8 16 24 32 40),
                7 => chain!($step; 0 8 16 24 32 40 48),
                8 => chain!($step; 0 8 16 24 32 40 48 56),
                9 => chain!($step; 0 8 16 24 32 40 48 56 64),
                10 => chain!($step; 0 8 16 24 32 40 48 56 64 72),
                11 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80),
                12 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88),
                13 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96),
                14 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104),
                15 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112),
                16 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120),
                17 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128),
                18 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136),
                19 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144),
                20 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152),
                21 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160),
                22 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168),
                23 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176),
                24 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184),
                25 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192),
                26 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200),
                27 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200 208),
                28 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200 208 216),
                29 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200 208 216 224),
                30 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200 208 216 224 232),
                31 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200 208 216 224 232 240),
                32 => chain!($step; 0 8 16 24 32 40 48 56 64 72 80 88 96 104 112 120 128 136 144 152 160 168 176 184 192 200 208 216 224 232 240 248),
                _ => unreachable!("limb_chain takes 1 to 32 limbs"),
            }
        };
    }
    #[cfg(target_arch = "x86_64")]
    if SUB { by_length!("sbb") } else { by_length!("adc") }
}

/// As [`grow_sum`], for [`wide_sum`].
#[cold]
#[inline(never)]
unsafe extern "C" fn grow_wide_sum<const M: usize, const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        crate::gmp::mpz::realloc(r, (M + 1) as mp_size_t);
        wide_sum::<M, SUB>(r, a, b)
    }
}

/// r's room grown to the longer operand's size and one, exactly, as GMP's
/// `mpz_add` grows it (its limbs kept: r may be an operand), then the sum.
#[cold]
#[inline(never)]
unsafe extern "C" fn grow_sum<const A: usize, const B: usize, const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        crate::gmp::mpz::realloc(r, (A.max(B) + 1) as mp_size_t);
        sum::<A, B, SUB>(r, a, b)
    }
}

/// GMP's `mpz_mul_ui`, `mpz_mul_si`, `mpz_add_ui` and `mpz_sub_ui`, made
/// here as [`mpz_mul`] makes its products where `a` has 1 to 4 limbs (and
/// the multiplier is not zero): a function for each length, the same
/// result, room and sign as GMP's (RESULTS.md, "Products of a few limbs").
///
/// # Safety
/// As GMP's: `r`, `a` initialised, `r` possibly `a`.
#[inline(always)]
pub unsafe fn mpz_mul_ui(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe {
        match small_length(a) {
            // small_length's index is below 4.
            Some(k) if v != 0 => BY_LIMB.get_unchecked(k)(r, a, v, false),
            _ => embedded::mpz_mul_ui(r, a, v),
        }
    }
}

/// As [`mpz_mul_ui`].
///
/// # Safety
/// As GMP's: `r`, `a` initialised, `r` possibly `a`.
#[inline(always)]
pub unsafe fn mpz_mul_si(r: mpz_ptr, a: mpz_srcptr, v: c_long) {
    unsafe {
        match small_length(a) {
            // small_length's index is below 4.
            Some(k) if v != 0 => BY_LIMB.get_unchecked(k)(r, a, v.unsigned_abs(), v < 0),
            _ => embedded::mpz_mul_si(r, a, v),
        }
    }
}

/// As [`mpz_mul_ui`].
///
/// # Safety
/// As GMP's: `r`, `a` initialised, `r` possibly `a`.
#[inline(always)]
pub unsafe fn mpz_add_ui(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe { by_length(&PLUS_LIMB, long_with_limb::<false>, r, a, v) }
}

/// As [`mpz_mul_ui`].
///
/// # Safety
/// As GMP's: `r`, `a` initialised, `r` possibly `a`.
#[inline(always)]
pub unsafe fn mpz_sub_ui(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe { by_length(&MINUS_LIMB, long_with_limb::<true>, r, a, v) }
}

/// A - 1 where `a` has A limbs, 1 to 4; else none.
#[inline(always)]
unsafe fn small_length(a: mpz_srcptr) -> Option<usize> {
    unsafe {
        let i = (*a)._mp_size.unsigned_abs().wrapping_sub(1);
        (i < SMALL_LIMBS).then_some(i as usize)
    }
}

type ByLimb = unsafe extern "C" fn(mpz_ptr, mpz_srcptr, c_ulong, bool);
type WithLimb = unsafe extern "C" fn(mpz_ptr, mpz_srcptr, c_ulong);

/// The functions of [`mpz_mul_ui`] and the rest, at [`small_length`]'s
/// index; those of [`mpz_add_ui`] and [`mpz_sub_ui`] at the length less 1,
/// to [`TABLED_WITH_LIMB`] limbs.
static BY_LIMB: [ByLimb; 4] = [by_limb::<1>, by_limb::<2>, by_limb::<3>, by_limb::<4>];
static PLUS_LIMB: [WithLimb; TABLED_WITH_LIMB] = [
    with_limb::<1, false>, with_limb::<2, false>, with_limb::<3, false>, with_limb::<4, false>,
    fixed_with_limb::<5, false>, fixed_with_limb::<6, false>, fixed_with_limb::<7, false>, fixed_with_limb::<8, false>,
    fixed_with_limb::<9, false>, fixed_with_limb::<10, false>, fixed_with_limb::<11, false>, fixed_with_limb::<12, false>,
    fixed_with_limb::<13, false>, fixed_with_limb::<14, false>, fixed_with_limb::<15, false>, fixed_with_limb::<16, false>,
];
static MINUS_LIMB: [WithLimb; TABLED_WITH_LIMB] = [
    with_limb::<1, true>, with_limb::<2, true>, with_limb::<3, true>, with_limb::<4, true>,
    fixed_with_limb::<5, true>, fixed_with_limb::<6, true>, fixed_with_limb::<7, true>, fixed_with_limb::<8, true>,
    fixed_with_limb::<9, true>, fixed_with_limb::<10, true>, fixed_with_limb::<11, true>, fixed_with_limb::<12, true>,
    fixed_with_limb::<13, true>, fixed_with_limb::<14, true>, fixed_with_limb::<15, true>, fixed_with_limb::<16, true>,
];

/// GMP's `mpz_add_ui`, or `mpz_sub_ui` for SUB, where `a` has more than
/// [`TABLED_WITH_LIMB`] limbs, as GMP's aors_ui.h makes it: the room grown
/// to a's size and one where the magnitudes add, a's size where they
/// differ; the limb added to the lowest or taken from it, the carry or
/// borrow through the next limbs, then the rest copied by [`copy_rest`]
/// where GMP's C loop copies it (RESULTS.md, "Sums of unlike lengths").
/// Zero is GMP's.
#[inline(never)]
unsafe extern "C" fn long_with_limb<const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe {
        let size = (*a)._mp_size;
        if size == 0 {
            return if SUB { embedded::mpz_sub_ui(r, a, v) } else { embedded::mpz_add_ui(r, a, v) };
        }
        limb_sum::<SUB>(r, a, v, size.unsigned_abs() as usize)
    }
}

/// As [`long_with_limb`] where `a` has N limbs (5 to [`TABLED_WITH_LIMB`]):
/// the rest's moves of a length the compiler knows.
#[inline(never)]
unsafe extern "C" fn fixed_with_limb<const N: usize, const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe { limb_sum::<SUB>(r, a, v, N) }
}

/// [`long_with_limb`]'s steps where `a` has `n` limbs, not 0.
#[inline(always)]
unsafe fn limb_sum<const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, v: c_ulong, n: usize) {
    unsafe {
        let size = (*a)._mp_size;
        // The magnitudes add where a's sign is the limb's (turned for a
        // difference).
        let adds = (size < 0) == SUB;
        let room = if adds { n + 1 } else { n };
        if ((*r)._mp_alloc as usize) < room {
            crate::gmp::mpz::realloc(r, room as mp_size_t);
        }
        // Read after the growth: r may be a.
        let (wp, up, v) = ((*r)._mp_d, (*a)._mp_d as *const mp_limb_t, v as mp_limb_t);
        let (size, negative) = if adds {
            let carry = add_limb(wp, up, n, v);
            *wp.add(n) = carry;
            (n + carry as usize, SUB)
        } else if n == 1 && *up < v {
            *wp = v - *up;
            (1, SUB)
        } else {
            (subtract_limb(wp, up, n, v), !SUB)
        };
        // size <= n + 1, within r's room, a c_int.
        let size = size as c_int;
        (*r)._mp_size = if negative { -size } else { size };
    }
}

/// The longest operand whose `mpz_add_ui` and `mpz_sub_ui` have a function
/// of their own length in [`PLUS_LIMB`] and [`MINUS_LIMB`]: there a call to
/// [`long_with_limb`], its length read, cost more than GMP's own function
/// (at 5 limbs 0.66x the reference's speed, against 0.77x through GMP's
/// function and 0.82x to 0.87x through [`fixed_with_limb`]; RESULTS.md,
/// "Sums of unlike lengths").
const TABLED_WITH_LIMB: usize = 16;

/// GMP's `mpn_add_1`: `w = u + v` over u's `n` limbs (not 0); the carry
/// out. w is u or apart from it.
#[inline(always)]
unsafe fn add_limb(wp: *mut mp_limb_t, up: *const mp_limb_t, n: usize, v: mp_limb_t) -> mp_limb_t {
    unsafe {
        let low = (*up).wrapping_add(v);
        *wp = low;
        carry_from(wp, up, n, 1, low < v)
    }
}

/// GMP's `mpn_sub_1` where `|u| >= v`: `w = u - v` over u's `n` limbs
/// (not 0, the top one not zero); the size of w. w is u or apart from it.
#[inline(always)]
unsafe fn subtract_limb(wp: *mut mp_limb_t, up: *const mp_limb_t, n: usize, v: mp_limb_t) -> usize {
    unsafe {
        let low = *up;
        *wp = low.wrapping_sub(v);
        borrow_from(wp, up, n, 1, low < v)
    }
}

/// `r = a v`, negated where `flip`, `a` of A limbs and `v` not zero, as
/// GMP's mul_i.h makes it: the room grown to A + 1 limbs first
/// ([`grow_by_limb`], reached by a tail jump).
#[inline(never)]
unsafe extern "C" fn by_limb<const A: usize>(r: mpz_ptr, a: mpz_srcptr, v: c_ulong, flip: bool) {
    unsafe {
        if ((*r)._mp_alloc as usize) <= A {
            return grow_by_limb::<A>(r, a, v, flip);
        }
        // r may be a: a's limbs are read before r's are written.
        let x: [mp_limb_t; A] = std::ptr::read_unaligned((*a)._mp_d as *const [mp_limb_t; A]);
        let mut p = [0 as mp_limb_t; 5];
        let mut carry: mp_limb_t = 0;
        for k in 0..A {
            let t = x[k] as u128 * v as u128 + carry as u128;
            p[k] = t as mp_limb_t;
            carry = (t >> 64) as mp_limb_t;
        }
        p[A] = carry;
        std::ptr::copy_nonoverlapping(p.as_ptr(), (*r)._mp_d, A + 1);
        let size = (A + usize::from(carry != 0)) as c_int;
        (*r)._mp_size = if ((*a)._mp_size < 0) != flip { -size } else { size };
    }
}

/// `r = a + v`, or `a - v` for SUB, `a` of A limbs, as GMP's aors_ui.h
/// makes it ([`grow_with_limb`] first where r's room is short): where the
/// magnitudes add, room for A + 1 limbs and the sign of a; else room for A
/// limbs, and v less a's one limb where that is smaller (the sign then
/// a's opposite), else a's magnitude less v (a's sign, one limb fewer
/// where its top one goes).
#[inline(never)]
unsafe extern "C" fn with_limb<const A: usize, const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe {
        let a_negative = (*a)._mp_size < 0;
        let adds = a_negative == SUB;
        let room = A + usize::from(adds);
        if ((*r)._mp_alloc as usize) < room {
            return grow_with_limb::<A, SUB>(r, a, v, room);
        }
        // r may be a: a's limbs are read before r's are written.
        let x: [mp_limb_t; A] = std::ptr::read_unaligned((*a)._mp_d as *const [mp_limb_t; A]);
        let mut s = [0 as mp_limb_t; 5];
        let (size, negative) = if adds {
            let mut carry = v;
            for k in 0..A {
                let (t, c) = x[k].overflowing_add(carry);
                s[k] = t;
                carry = mp_limb_t::from(c);
            }
            s[A] = carry;
            (A + usize::from(carry != 0), a_negative)
        } else if A == 1 && x[0] < v {
            s[0] = v - x[0];
            (1, !a_negative)
        } else {
            let mut borrow = v;
            for k in 0..A {
                let (t, b) = x[k].overflowing_sub(borrow);
                s[k] = t;
                borrow = mp_limb_t::from(b);
            }
            (A - usize::from(s[A - 1] == 0), a_negative)
        };
        // A limbs, and the carry's where r has room for it: a length the
        // compiler knows, no call to memcpy.
        std::ptr::copy_nonoverlapping(s.as_ptr(), (*r)._mp_d, A);
        if adds {
            *(*r)._mp_d.add(A) = s[A];
        }
        // size <= 5.
        let size = size as c_int;
        (*r)._mp_size = if negative { -size } else { size };
    }
}

/// r's room grown to A + 1 limbs (its limbs kept: r may be a), then
/// [`by_limb`]: out of line, as [`grow`].
#[cold]
#[inline(never)]
unsafe extern "C" fn grow_by_limb<const A: usize>(r: mpz_ptr, a: mpz_srcptr, v: c_ulong, flip: bool) {
    unsafe {
        crate::gmp::mpz::realloc(r, (A + 1) as mp_size_t);
        by_limb::<A>(r, a, v, flip)
    }
}

/// r's room grown to `room` limbs (its limbs kept: r may be a), then
/// [`with_limb`]: out of line, as [`grow`].
#[cold]
#[inline(never)]
unsafe extern "C" fn grow_with_limb<const A: usize, const SUB: bool>(r: mpz_ptr, a: mpz_srcptr, v: c_ulong, room: usize) {
    unsafe {
        crate::gmp::mpz::realloc(r, room as mp_size_t);
        with_limb::<A, SUB>(r, a, v)
    }
}

/// `out = a * b` (`out` of a.len() + b.len() limbs, both operands
/// non-empty, none overlapping `out`; the same slice twice squares, as
/// GMP's mpn_mul does when its operands are one).
pub fn mul(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) {
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    assert!(!v.is_empty() && out.len() == u.len() + v.len(), "cpu::mul: {} x {} limbs into {}", u.len(), v.len(), out.len());
    // SAFETY: out holds u.len() + v.len() limbs apart from u and v; GMP's
    // mpn_mul takes un >= vn >= 1.
    unsafe { embedded::mpn_mul(out.as_mut_ptr(), u.as_ptr(), u.len() as mp_size_t, v.as_ptr(), v.len() as mp_size_t) };
}

/// `out = a * b` as [`mul`] takes them, its work shared with the kept
/// helper threads (src/helpers.rs): one level of Karatsuba's method when
/// the operands are of about one size (three products of half the size,
/// two of them handed out), else the longer operand cut in two (two
/// products); `twice`: each of those parts cut again the same way (up to
/// nine products of a quarter of the size, for a board of eight helpers).
/// GMP computes each part. Where the helpers are asleep or busy with
/// another caller's work, GMP's product whole (cut for a single thread,
/// the parts would cost it 1.15x the whole). Returns whether the helpers
/// were asked.
pub fn mul_on_cores(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t], twice: bool) -> bool {
    if !helpers::awake() {
        mul(out, a, b);
        return false;
    }
    mul_cut(out, a, b, twice)
}

/// `mul_on_cores`'s product cut for the helpers, whether or not they are
/// awake.
fn mul_cut(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t], twice: bool) -> bool {
    assert!(!a.is_empty() && !b.is_empty() && out.len() == a.len() + b.len(), "cpu::mul_cut: {} x {} limbs into {}", a.len(), b.len(), out.len());
    let made = if twice { cut((out, a, b), |parts| cut_each(parts, &mut |parts| parts_on_cores(parts, mul))) } else { cut((out, a, b), |parts| parts_on_cores(parts, mul)) };
    made.unwrap_or(false)
}

/// One product cut into the parts `make` is given, then put together from
/// them: one level of Karatsuba's method where the shorter operand is longer
/// than half the longer one (three parts), else the longer operand cut in
/// two (two parts); a product of one-limb operands is its own part. The
/// part's two operands one slice: a square, and so are its Karatsuba parts.
fn cut<R>(part: Part<'_>, make: impl FnOnce(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    let (out, a, b) = part;
    let square = std::ptr::eq(a, b);
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if u.len() < 2 {
        return make(vec![(out, u, v)]);
    }
    let k = u.len().div_ceil(2);
    if v.len() > k { karatsuba_by(out, u, v, k, square, make) } else { halves_by(out, u, v, k, make) }
}

/// Every one of `parts` cut by [`cut`], and all their parts made by one
/// `make`, so that they run at once.
fn cut_each<R>(parts: Vec<Part<'_>>, make: &mut dyn FnMut(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    cut_where(parts, &|_, _| true, make)
}

/// Every one of `parts` whose shorter operand has at least `from` limbs
/// and at most half the longer one's (rounded up) cut in two (by
/// [`halves_by`], as [`cut`] cuts such a product), the others whole, and
/// all of them made by one `make`, so that they run at once; then each cut
/// one put together.
pub fn halves_each<R>(parts: Vec<Part<'_>>, from: usize, make: &mut dyn FnMut(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    cut_where(parts, &|long, short| short >= from.max(1) && short <= long.div_ceil(2), make)
}

/// The parts for which `wanted(longer, shorter)` (their operands' limbs)
/// cut by [`cut`], the others whole, all made by one `make` in the parts'
/// order, then each cut one put together.
fn cut_where<R>(parts: Vec<Part<'_>>, wanted: &dyn Fn(usize, usize) -> bool, make: &mut dyn FnMut(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    fn next<'a, R>(mut ready: Vec<Part<'a>>, mut rest: std::vec::IntoIter<Part<'a>>, wanted: &dyn Fn(usize, usize) -> bool, make: &mut dyn FnMut(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
        let Some(part) = rest.next() else { return make(ready) };
        let (a, b) = (part.1.len(), part.2.len());
        if !wanted(a.max(b), a.min(b)) {
            ready.push(part);
            return next(ready, rest, wanted, make);
        }
        cut(part, |pieces| next(ready.into_iter().chain(pieces).collect(), rest, wanted, make))
    }
    next(Vec::new(), parts.into_iter(), wanted, make)
}

/// `|x - y|` into `d` (x.len() limbs, y not longer, not empty), and whether
/// x < y.
fn difference(d: &mut [mp_limb_t], x: &[mp_limb_t], y: &[mp_limb_t]) -> bool {
    let (n, m) = (x.len(), y.len());
    debug_assert!(m <= n && d.len() == n && m > 0);
    let x_high_zero = x[m..].iter().all(|&l| l == 0);
    // SAFETY: d holds n limbs apart from x and y; GMP's cmp and subs on the
    // lengths given (m >= 1).
    unsafe {
        let below = x_high_zero && embedded::mpn_cmp(x.as_ptr(), y.as_ptr(), m as mp_size_t) < 0;
        if below {
            // y - x: x's limbs above m are zero, so y - x has m limbs.
            embedded::mpn_sub_n(d.as_mut_ptr(), y.as_ptr(), x.as_ptr(), m as mp_size_t);
            d[m..].fill(0);
        } else {
            let borrow = embedded::mpn_sub_n(d.as_mut_ptr(), x.as_ptr(), y.as_ptr(), m as mp_size_t);
            if n > m {
                embedded::mpn_sub_1(d.as_mut_ptr().add(m), x.as_ptr().add(m), (n - m) as mp_size_t, borrow);
            }
        }
        below
    }
}

/// Sums, differences and shifts of at least this many limbs are cut among
/// threads: a product made from halves (`halves_by`) adds its upper half in
/// at this scale, a square root (src/algorithms/sqrt.rs) shifts and
/// subtracts at it, and one thread moves only a few GB/s.
pub(crate) const THREADED_LIMBS: usize = 1 << 19;

/// How a pass over `n` limbs from THREADED_LIMBS is cut: the threads (up
/// to 8, the host's cores allowing) and the limbs a piece.
fn pieces(n: usize) -> (usize, usize) {
    let threads = parallel::cores().clamp(1, 8);
    (threads, n.div_ceil(threads))
}

/// `carry_on`, or `borrow_on` where `subtract`.
fn carry_or_borrow_on(r: &mut [mp_limb_t], c: mp_limb_t, subtract: bool) -> mp_limb_t {
    if subtract { borrow_on(r, c) } else { carry_on(r, c) }
}

/// What `linear_into` does to a piece of r with the same piece of x.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Linear {
    /// r + x.
    Add,
    /// r - x.
    Sub,
    /// x - r (r and x of one length).
    SubFrom,
}

/// `r = r + x`, `r - x` or `x - r` (`Linear`; x no longer than r, as long
/// for `SubFrom`) by GMP's adds and subtractions, the carry or borrow
/// carried on through the rest of r: what comes out of r's top is
/// returned (the result is modulo B^r.len()). From THREADED_LIMBS limbs x
/// is cut into pieces done on threads at once, each piece's carry then
/// carried on, in order, from the piece's end.
pub fn linear_into(r: &mut [mp_limb_t], x: &[mp_limb_t], op: Linear) -> mp_limb_t {
    let (rn, xn) = (r.len(), x.len());
    debug_assert!(xn <= rn && (op != Linear::SubFrom || xn == rn));
    if xn == 0 {
        return 0;
    }
    let (rp, xp) = (r.as_mut_ptr(), x.as_ptr());
    // SAFETY: r in place (GMP allows rp equal to either operand), x apart,
    // both at least xn >= 1 limbs.
    let c = unsafe {
        match op {
            Linear::Add => add_or_sub_n(rp, rp, xp, xn, false),
            Linear::Sub => add_or_sub_n(rp, rp, xp, xn, true),
            Linear::SubFrom => add_or_sub_n(rp, xp, rp, xn, true),
        }
    };
    carry_or_borrow_on(&mut r[xn..], c, op != Linear::Add)
}

/// `{rp, n} = {up, n} + {vp, n}`, or `-` (GMP's mpn_add_n, mpn_sub_n):
/// the carry or borrow out. From THREADED_LIMBS limbs the limbs are cut
/// into pieces done on threads at once, each piece's carry then carried
/// on through rp, in order, from the piece's end.
///
/// # Safety
/// As GMP's: n >= 1; rp equal to up or to vp, or apart from both; all of
/// n limbs.
pub unsafe fn add_or_sub_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: usize, subtract: bool) -> mp_limb_t {
    let gmp = |rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: usize| {
        // SAFETY: the caller's operands, or a piece of them at one offset.
        unsafe {
            if subtract {
                embedded::mpn_sub_n(rp, up, vp, n as mp_size_t)
            } else {
                embedded::mpn_add_n(rp, up, vp, n as mp_size_t)
            }
        }
    };
    if n < THREADED_LIMBS {
        return gmp(rp, up, vp, n);
    }
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let (threads, per) = pieces(n);
    let carries: Vec<AtomicU64> = (0..n.div_ceil(per)).map(|_| AtomicU64::new(0)).collect();
    // Addresses, not pointers, cross to the threads; each piece is its own
    // limbs of each operand.
    let (r, u, v) = (rp as usize, up as usize, vp as usize);
    parallel::each_index(carries.len(), 1, threads, |i| {
        let (at, len) = (i * per, per.min(n - i * per));
        let limb = std::mem::size_of::<mp_limb_t>();
        let c = gmp((r + at * limb) as *mut mp_limb_t, (u + at * limb) as *const mp_limb_t, (v + at * limb) as *const mp_limb_t, len);
        carries[i].store(c, Relaxed);
    });
    // SAFETY: the threads are done; rp holds n limbs.
    let r = unsafe { std::slice::from_raw_parts_mut(rp, n) };
    let mut out = 0;
    for (i, c) in carries.iter().enumerate() {
        let end = ((i + 1) * per).min(n);
        let c = c.load(Relaxed);
        out |= carry_or_borrow_on(&mut r[end..], c, subtract);
    }
    out
}

/// `{rp, un} += {vp, vn}`, or `-=` where `subtract` (`un >= vn >= 1`): GMP's
/// mpn_add or mpn_sub with the result over the first operand; the carry or
/// borrow out.
///
/// # Safety
/// rp holds un limbs, vp vn limbs, apart from them.
pub unsafe fn add_or_sub_into(rp: *mut mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize, subtract: bool) -> mp_limb_t {
    // SAFETY: the caller's limbs; rp's past vn are its own.
    unsafe {
        let c = add_or_sub_n(rp, rp, vp, vn, subtract);
        carry_or_borrow_on(std::slice::from_raw_parts_mut(rp.add(vn), un - vn), c, subtract)
    }
}

/// GMP's mpn_lshift (`left`) or mpn_rshift of `{up, n}` by 1 to 63 bits
/// into `{rp, n}`: the bits shifted out. From THREADED_LIMBS limbs each
/// piece is shifted by GMP on a thread of its own, the one limb each piece
/// reads from its neighbour read before any piece is written, so rp may be
/// up itself.
///
/// # Safety
/// n >= 1, 1 <= cnt <= 63, rp equal to up or apart from it, all of n limbs.
pub unsafe fn shift_n(rp: *mut mp_limb_t, up: *const mp_limb_t, n: usize, cnt: u32, left: bool) -> mp_limb_t {
    let gmp = |rp: *mut mp_limb_t, up: *const mp_limb_t, n: usize| {
        // SAFETY: the caller's operands, or a piece of them at one offset.
        unsafe {
            if left {
                embedded::mpn_lshift(rp, up, n as mp_size_t, cnt)
            } else {
                embedded::mpn_rshift(rp, up, n as mp_size_t, cnt)
            }
        }
    };
    if n < THREADED_LIMBS {
        return gmp(rp, up, n);
    }
    let (threads, per) = pieces(n);
    let pieces = n.div_ceil(per);
    // SAFETY: up holds n limbs, read before any is written.
    let (out, neighbours): (mp_limb_t, Vec<mp_limb_t>) = unsafe {
        if left {
            // Piece i's bottom limb takes the top bits of the limb below it.
            (*up.add(n - 1) >> (64 - cnt), (0..pieces).map(|i| if i == 0 { 0 } else { *up.add(i * per - 1) }).collect())
        } else {
            // Piece i's top limb takes the low bits of the limb above it.
            (*up << (64 - cnt), (0..pieces).map(|i| if (i + 1) * per >= n { 0 } else { *up.add((i + 1) * per) }).collect())
        }
    };
    let (r, u) = (rp as usize, up as usize);
    parallel::each_index(pieces, 1, threads, |i| {
        let (at, len) = (i * per, per.min(n - i * per));
        let limb = std::mem::size_of::<mp_limb_t>();
        let (piece, from) = ((r + at * limb) as *mut mp_limb_t, (u + at * limb) as *const mp_limb_t);
        gmp(piece, from, len);
        // SAFETY: this piece's own limbs.
        unsafe {
            if left {
                *piece |= neighbours[i] >> (64 - cnt);
            } else {
                *piece.add(len - 1) |= neighbours[i] << (64 - cnt);
            }
        }
    });
    out
}

/// `r += x` (x no longer than r): the carry out of r.
fn add_into(r: &mut [mp_limb_t], x: &[mp_limb_t]) -> mp_limb_t {
    linear_into(r, x, Linear::Add)
}

/// `r += c` (c of 0 or 1) from r's first limb, stopping where the carry
/// stops: the carry out of r.
pub fn carry_on(r: &mut [mp_limb_t], mut c: mp_limb_t) -> mp_limb_t {
    for limb in r {
        if c == 0 {
            break;
        }
        let (sum, over) = limb.overflowing_add(c);
        *limb = sum;
        c = over as mp_limb_t;
    }
    c
}

/// `r -= b` (b of 0 or 1) from r's first limb, stopping where the borrow
/// stops: the borrow out of r.
pub fn borrow_on(r: &mut [mp_limb_t], mut b: mp_limb_t) -> mp_limb_t {
    for limb in r {
        if b == 0 {
            break;
        }
        let (difference, under) = limb.overflowing_sub(b);
        *limb = difference;
        b = under as mp_limb_t;
    }
    b
}

/// `r = B^r.len() - r` (r not zero: the magnitude of r read as a
/// negative two's complement number), on threads from THREADED_LIMBS limbs.
pub fn negate(r: &mut [mp_limb_t]) {
    let complement = |piece: &mut [mp_limb_t]| piece.iter_mut().for_each(|l| *l = !*l);
    if r.len() < THREADED_LIMBS {
        complement(r);
    } else {
        let (threads, per) = pieces(r.len());
        parallel::each_item(r, per, threads, |_, piece| complement(piece));
    }
    carry_on(r, 1);
}

/// Whether a and b are the same limbs, compared on threads from
/// THREADED_LIMBS limbs.
pub fn limbs_equal(a: &[mp_limb_t], b: &[mp_limb_t]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() < THREADED_LIMBS {
        return a == b;
    }
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    let (threads, per) = pieces(a.len());
    let differ = AtomicBool::new(false);
    parallel::each_index(a.len().div_ceil(per), 1, threads, |i| {
        let range = i * per..((i + 1) * per).min(a.len());
        if !differ.load(Relaxed) && a[range.clone()] != b[range] {
            differ.store(true, Relaxed);
        }
    });
    !differ.load(Relaxed)
}

/// `dst = src * 2^by` (by >= 0) or `floor(src / 2^-by)`, as magnitudes,
/// cut to dst's length (zeros above what src gives), dst apart from src;
/// on threads from THREADED_LIMBS limbs (each limb of dst is two of src's
/// read apart from the others).
pub fn shift_into(dst: &mut [mp_limb_t], src: &[mp_limb_t], by: i64) {
    if dst.len() < THREADED_LIMBS {
        return shift_piece(dst, 0, src, by);
    }
    let (threads, per) = pieces(dst.len());
    parallel::each_item(dst, per, threads, |i, piece| shift_piece(piece, i * per, src, by));
}

/// Limbs `first..first + piece.len()` of `shift_into`'s dst, by GMP's
/// shifts over the source limbs they come from, the one neighbour limb
/// beyond those then ORed in.
fn shift_piece(piece: &mut [mp_limb_t], first: usize, src: &[mp_limb_t], by: i64) {
    let (whole, bits) = ((by.unsigned_abs() / 64) as usize, (by.unsigned_abs() % 64) as u32);
    let len = piece.len();
    // dst[i] is src[i - whole] shifted left, or src[i + whole] right:
    // zeros below the source's start (left) and above its end.
    let lo = if by >= 0 { whole.saturating_sub(first).min(len) } else { 0 };
    piece[..lo].fill(0);
    let from = if by >= 0 { first + lo - whole } else { first + whole };
    let avail = src.len().saturating_sub(from).min(len - lo);
    let out = &mut piece[lo..lo + avail];
    if avail > 0 {
        let up = src[from..].as_ptr();
        // SAFETY: out and src[from..] hold avail limbs, apart; 1 <= bits <= 63.
        unsafe {
            match (bits, by >= 0) {
                (0, _) => out.copy_from_slice(&src[from..from + avail]),
                (b, true) => {
                    embedded::mpn_lshift(out.as_mut_ptr(), up, avail as mp_size_t, b);
                }
                (b, false) => {
                    embedded::mpn_rshift(out.as_mut_ptr(), up, avail as mp_size_t, b);
                }
            }
        }
    }
    let mut end = lo + avail;
    if bits > 0 {
        if by >= 0 {
            // The bits of the limb below the first one shifted, and where the
            // source ends inside the piece, its top limb's spill above it.
            if avail > 0 && from >= 1 {
                piece[lo] |= src[from - 1] >> (64 - bits);
            }
            if end < len && from + avail == src.len() && from + avail >= 1 {
                piece[end] = src[from + avail - 1] >> (64 - bits);
                end += 1;
            }
        } else if avail > 0 && from + avail < src.len() {
            piece[end - 1] |= src[from + avail] << (64 - bits);
        }
    }
    piece[end..].fill(0);
}

/// One product for `karatsuba_by` or [`halves_by`] to have made:
/// `out = x * y`, `out` of x.len() + y.len() limbs apart from both (x and
/// y one slice: a square).
pub type Part<'a> = (&'a mut [mp_limb_t], &'a [mp_limb_t], &'a [mp_limb_t]);

/// Make every part by `product` (GMP's [`mul`], or it timed), on the kept
/// helper threads where they are free (`helpers::share`): whether they
/// were asked.
pub fn parts_on_cores(parts: Vec<Part<'_>>, product: impl Fn(&mut [mp_limb_t], &[mp_limb_t], &[mp_limb_t]) + Sync) -> Option<bool> {
    let product = &product;
    let mut calls: Vec<_> = parts.into_iter().map(|(o, x, y)| move || product(&mut *o, x, y)).collect();
    let mut tasks: Vec<&mut (dyn FnMut() + Send)> = calls.iter_mut().map(|c| c as &mut (dyn FnMut() + Send)).collect();
    Some(helpers::share(&mut tasks))
}

/// u v with u = u0 + u1 B^k, v = v0 + v1 B^k (v1 not empty, u at least as
/// long as v): u0 v0 at the bottom of `out`, u1 v1 above it, t = |u0 - u1|
/// |v0 - v1| beside, the three made by `make` (None: it failed, `out`
/// holds anything); then the middle u0 v1 + u1 v0 = u0 v0 + u1 v1 -+ t
/// added at B^k. `square`: u and v are one number (t, u0 v0 and u1 v1
/// then squares).
fn karatsuba_by<R>(out: &mut [mp_limb_t], u: &[mp_limb_t], v: &[mp_limb_t], k: usize, square: bool, make: impl FnOnce(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    let (u0, u1) = u.split_at(k);
    let (v0, v1) = v.split_at(k);
    // One scratch for |u0 - u1|, |v0 - v1| (none for a square), their
    // product t and the middle m.
    let mut scratch = vec![0; if square { 5 * k + 1 } else { 6 * k + 1 }];
    let (du, rest) = scratch.split_at_mut(k);
    let (dv, rest) = rest.split_at_mut(if square { 0 } else { k });
    let (t, m) = rest.split_at_mut(2 * k);
    let u_below = difference(du, u0, u1);
    let v_below = if square { u_below } else { difference(dv, v0, v1) };
    let made = {
        let (low, high) = out.split_at_mut(2 * k);
        // The same slices twice where the product is a square.
        let (v0, v1, dv): (&[mp_limb_t], &[mp_limb_t], &[mp_limb_t]) = if square { (u0, u1, &*du) } else { (v0, v1, &*dv) };
        let du: &[mp_limb_t] = du;
        make(vec![(low, u0, v0), (high, u1, v1), (&mut *t, du, dv)])?
    };
    // m = u0 v0 + u1 v1 (2k + 1 limbs), then - t where the differences'
    // signs agree, + t where they differ: u0 v1 + u1 v0 >= 0.
    m[..2 * k].copy_from_slice(&out[..2 * k]);
    m[2 * k] = add_into(&mut m[..2 * k], &out[2 * k..]);
    if u_below == v_below {
        // SAFETY: m in place, t apart, 2k limbs.
        let borrow = unsafe { embedded::mpn_sub_n(m.as_mut_ptr(), m.as_ptr(), t.as_ptr(), (2 * k) as mp_size_t) };
        m[2 * k] -= borrow;
    } else {
        m[2 * k] += add_into(&mut m[..2 * k], t);
    }
    // The middle is below B^(un + vn - k) (it is part of the product), so it
    // fits above B^k once its zero limbs are dropped.
    let mn = m.len() - m.iter().rev().take_while(|&&l| l == 0).count();
    let carry = add_into(&mut out[k..], &m[..mn]);
    debug_assert_eq!(carry, 0);
    Some(made)
}

/// u v with u = u0 + u1 B^k (0 < k < u.len()): u0 v into the bottom of
/// `out` and u1 v beside it, the two made by `make` (None: it failed, `out`
/// holds anything), then u1 v added at B^k: its low v.len() limbs onto u0
/// v's top, the rest copied above (on the host's cores where large).
pub fn halves_by<R>(out: &mut [mp_limb_t], u: &[mp_limb_t], v: &[mp_limb_t], k: usize, make: impl FnOnce(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    let (u0, u1) = u.split_at(k);
    let vn = v.len();
    let mut t = vec![0; u1.len() + vn];
    let made = make(vec![(&mut out[..k + vn], u0, v), (&mut t, u1, v)])?;
    let (mid, top) = out[k..].split_at_mut(vn);
    parallel::copy_limbs(top, &t[vn..]);
    let carry = add_into(mid, &t[..vn]);
    let carry = carry_on(top, carry);
    debug_assert_eq!(carry, 0);
    Some(made)
}

/// `r = p mod (B^r.len() - 1)` for `p` of r.len() to 2 r.len() limbs: the
/// low half plus the high half, the carry out added back at the bottom (B^rn
/// is 1 modulo B^rn - 1). A nonzero multiple of B^rn - 1 comes out as
/// B^rn - 1, never 0, which is GMP's representation.
pub fn fold_mod_bnm1(p: &[mp_limb_t], r: &mut [mp_limb_t]) {
    let rn = r.len();
    debug_assert!(rn <= p.len() && p.len() <= 2 * rn);
    let (lo, hi) = p.split_at(rn);
    let hn = hi.len();
    if hn == 0 {
        r.copy_from_slice(lo);
        return;
    }
    // GMP's own adds (they take n >= 1): r = lo + hi, then the carry out
    // added back at the bottom. lo + hi < 2 B^rn, so after that end-around
    // carry the sum is below B^rn.
    // SAFETY: r and lo have rn limbs, hi has 1 <= hn <= rn limbs, and r
    // overlaps neither (p is another buffer) except itself in place.
    unsafe {
        let rp = r.as_mut_ptr();
        let mut carry = embedded::mpn_add_n(rp, lo.as_ptr(), hi.as_ptr(), hn as mp_size_t);
        if hn < rn {
            carry = embedded::mpn_add_1(rp.add(hn), lo.as_ptr().add(hn), (rn - hn) as mp_size_t, carry);
        }
        if carry != 0 {
            embedded::mpn_add_1(rp, rp, rn as mp_size_t, carry);
        }
    }
}

/// The modulus size GMP's mpn_mulmod_bnm1 computes best at for products of
/// up to `n` limbs: GMP's own mpn_mulmod_bnm1_next_size, never the GPU's.
pub fn gmp_mulmod_bnm1_size(n: usize) -> usize {
    // SAFETY: a pure function of n.
    let size = unsafe { embedded::mpn_mulmod_bnm1_next_size(n as mp_size_t) };
    usize::try_from(size).unwrap_or(n).max(n)
}

/// `{rp, an+bn} = {ap, an} * {bp, bn}` (`an >= bn >= 1`; the same operand
/// twice squares) by GMP's mpn_mulmod_bnm1 (mpn_sqrmod_bnm1) with no
/// wrap-around, at GMP's own size for a product of an + bn limbs: what GMP's
/// algorithms ask of mulmod_bnm1 with any rn >= an + bn, at the cost GMP
/// has at its best such rn. Its scratch is its own.
///
/// # Safety
/// `ap`, `bp` point at `an`, `bn` limbs; `rp` at an + bn limbs overlapping
/// neither.
pub unsafe fn product_by_mulmod_bnm1(rp: *mut mp_limb_t, ap: *const mp_limb_t, an: usize, bp: *const mp_limb_t, bn: usize) {
    let rn = gmp_mulmod_bnm1_size(an + bn);
    let half = rn >> 1;
    let square = ap == bp && an == bn;
    // GMP's mpn_mulmod_bnm1_itch and mpn_sqrmod_bnm1_itch (gmp-impl.h).
    let itch = if square { rn + 3 + if an > half { an } else { 0 } } else { rn + 4 + if an > half { if bn > half { rn } else { half } } else { 0 } };
    let mut scratch: Vec<mp_limb_t> = vec![0; itch];
    let (rn, an, bn) = (rn as mp_size_t, an as mp_size_t, bn as mp_size_t);
    // SAFETY: 0 < bn <= an <= an + bn <= rn, scratch of GMP's itch for
    // (rn, an, bn), rp as the caller promises.
    unsafe {
        if square {
            embedded::mpn_sqrmod_bnm1(rp, rn, ap, an, scratch.as_mut_ptr());
        } else {
            embedded::mpn_mulmod_bnm1(rp, rn, ap, an, bp, bn, scratch.as_mut_ptr());
        }
    }
}

/// `a * b`, or with `modulus` Some(rn) that product mod B^rn - 1 in
/// min(rn, a.len() + b.len()) limbs as GMP's mulmod_bnm1 gives it: the
/// reference a GPU product is checked against.
pub fn product(a: &[mp_limb_t], b: &[mp_limb_t], modulus: Option<usize>) -> Vec<mp_limb_t> {
    let mut p = vec![0; a.len() + b.len()];
    mul(&mut p, a, b);
    match modulus {
        Some(rn) if rn < p.len() => {
            let mut folded = vec![0; rn];
            fold_mod_bnm1(&p, &mut folded);
            folded
        }
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_keeps_gmp_representation_of_zero() {
        let m = u64::MAX;
        // (B^2 - 1) * 1 = B^2 - 1: stays all ones (the class of zero, nonzero operands).
        let mut r = [0; 2];
        fold_mod_bnm1(&[m, m, 0, 0], &mut r);
        assert_eq!(r, [m, m]);
        // 2 (B^2 - 1) = B^2 + (B^2 - 2): carry out, added back, all ones again.
        fold_mod_bnm1(&[m - 1, m, 1, 0], &mut r);
        assert_eq!(r, [m, m]);
        // Zero stays zero.
        fold_mod_bnm1(&[0, 0, 0, 0], &mut r);
        assert_eq!(r, [0, 0]);
        // B^2 + 5 = 6 mod B^2 - 1.
        fold_mod_bnm1(&[5, 0, 1, 0], &mut r);
        assert_eq!(r, [6, 0]);
        // an + bn <= rn: the caller passes r of an + bn limbs, the product itself.
        let mut r3 = [9; 3];
        fold_mod_bnm1(&[7, 8], &mut r3[..2]);
        assert_eq!(r3, [7, 8, 9]);
    }

    /// `halves_each` leaves GMP's products, limb for limb: the long ones by
    /// short ones cut (two parts each handed to `make`), the others whole,
    /// all in one `make`.
    #[test]
    fn halves_each_puts_the_products_together() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut limbs = |n: usize| -> Vec<mp_limb_t> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                })
                .collect()
        };
        // (longer, shorter): cut where shorter <= half the longer (rounded
        // up) and >= 4.
        let shapes = [(9usize, 4usize), (8, 4), (100, 33), (7, 5), (64, 3), (1, 1), (200, 100), (201, 101), (201, 102)];
        let ops: Vec<(Vec<mp_limb_t>, Vec<mp_limb_t>)> = shapes.iter().map(|&(u, v)| (limbs(u), limbs(v))).collect();
        let mut got: Vec<Vec<mp_limb_t>> = shapes.iter().map(|&(u, v)| vec![0; u + v]).collect();
        let parts: Vec<Part<'_>> = got.iter_mut().zip(&ops).map(|(o, (u, v))| (&mut o[..], &u[..], &v[..])).collect();
        let mut made = 0;
        let done = halves_each(parts, 4, &mut |parts| {
            made = parts.len();
            for (o, a, b) in parts {
                mul(o, a, b);
            }
            Some(())
        });
        assert!(done.is_some());
        // Cut: (9, 4), (8, 4), (100, 33), (200, 100), (201, 101); (7, 5)
        // and (201, 102) are over half, (64, 3) and (1, 1) too short.
        assert_eq!(made, shapes.len() + 5, "the parts handed to make");
        for ((u, v), p) in ops.iter().zip(&got) {
            let mut want = vec![0; u.len() + v.len()];
            mul(&mut want, u, v);
            assert!(*p == want, "{} x {} limbs: the halves put together differ from GMP's product", u.len(), v.len());
        }
    }

    #[test]
    fn products_match_gmp_mod_bnm1() {
        // (B^2 - 1)^2 = B^4 - 2 B^2 + 1: mod B^3 - 1 that is B - 2 B^2 + 1.
        let m = u64::MAX;
        let p = product(&[m, m], &[m, m], Some(3));
        let mut want = [0u64; 3];
        let mut scratch = [0u64; 16];
        // SAFETY: GMP's mulmod_bnm1 with rn = 3 >= an = bn = 2, its scratch
        // (at most 2 rn + 4 limbs) in `scratch`.
        unsafe { embedded::mpn_mulmod_bnm1(want.as_mut_ptr(), 3, [m, m].as_ptr(), 2, [m, m].as_ptr(), 2, scratch.as_mut_ptr()) };
        assert_eq!(p, want);
        assert_eq!(product(&[3], &[5], Some(4)), [15, 0]);
    }

    /// An integer of `limbs` (top limb nonzero, or none: zero) with that
    /// sign, its room grown to `room` limbs first.
    fn number(limbs: &[mp_limb_t], negative: bool, room: usize) -> crate::gmp::mpz::Int {
        let mut z = crate::gmp::mpz::Int::new();
        // SAFETY: z initialised; the view reads limbs, which outlive it.
        unsafe {
            if room > 0 {
                crate::gmp::mpz::realloc(z.m(), room as mp_size_t);
                // A mark in the room: a limb a result leaves unwritten
                // would otherwise hold what the block's last owner left,
                // often the same case's limbs.
                let d = (*z.m())._mp_d;
                for k in 0..room {
                    *d.add(k) = 0x5a5a_5a5a_5a5a_5a5a ^ k as mp_limb_t;
                }
            }
            if !limbs.is_empty() {
                let v = crate::gmp::mpz::view(limbs);
                embedded::mpz_set(z.m(), &v);
                if negative {
                    embedded::mpz_neg(z.m(), z.p());
                }
            }
        }
        z
    }

    type MpzOp = unsafe fn(mpz_ptr, mpz_srcptr, mpz_srcptr);

    /// (ours, GMP's) for `mpz_mul`, `mpz_add` and `mpz_sub`.
    const OPS: [(&str, MpzOp, MpzOp); 3] = [
        ("mul", |r, a, b| unsafe { mpz_mul(r, a, b) }, |r, a, b| unsafe { embedded::mpz_mul(r, a, b) }),
        ("add", |r, a, b| unsafe { mpz_add(r, a, b) }, |r, a, b| unsafe { embedded::mpz_add(r, a, b) }),
        ("sub", |r, a, b| unsafe { mpz_sub(r, a, b) }, |r, a, b| unsafe { embedded::mpz_sub(r, a, b) }),
    ];

    /// `op` on operands of `x` and `y` limbs with those signs, in one of
    /// eight placements (r apart with room 0, 1, n - 1 or 16 limbs; r = a;
    /// r = b; both operands one, r apart; r = a = b): r's size, room and
    /// limbs.
    fn result_by(op: MpzOp, x: &[mp_limb_t], y: &[mp_limb_t], signs: (bool, bool), placement: usize) -> (c_int, c_int, Vec<mp_limb_t>) {
        let n = x.len() + y.len();
        let room = [0, 1, n.saturating_sub(1), 16][placement.min(3)];
        let mut a = number(x, signs.0, 0);
        let mut b = number(y, signs.1, 0);
        let mut r = number(&[], false, room);
        // SAFETY: all three initialised; aliasing as GMP allows it.
        unsafe {
            match placement {
                0..=3 => op(r.m(), a.p(), b.p()),
                4 => {
                    op(a.m(), a.p(), b.p());
                    r = a;
                }
                5 => {
                    op(b.m(), a.p(), b.p());
                    r = b;
                }
                6 => op(r.m(), a.p(), a.p()),
                _ => {
                    op(a.m(), a.p(), a.p());
                    r = a;
                }
            }
        }
        (r.0._mp_size, r.0._mp_alloc, r.limbs().to_vec())
    }

    type LimbOp = unsafe fn(mpz_ptr, mpz_srcptr, mp_limb_t);

    /// (ours, GMP's) for `mpz_mul_ui`, `mpz_add_ui`, `mpz_sub_ui`, and
    /// `mpz_mul_si` given the limb's bits as a signed long.
    const LIMB_OPS: [(&str, LimbOp, LimbOp); 4] = [
        ("mul_ui", |r, a, v| unsafe { mpz_mul_ui(r, a, v) }, |r, a, v| unsafe { embedded::mpz_mul_ui(r, a, v) }),
        ("add_ui", |r, a, v| unsafe { mpz_add_ui(r, a, v) }, |r, a, v| unsafe { embedded::mpz_add_ui(r, a, v) }),
        ("sub_ui", |r, a, v| unsafe { mpz_sub_ui(r, a, v) }, |r, a, v| unsafe { embedded::mpz_sub_ui(r, a, v) }),
        ("mul_si", |r, a, v| unsafe { mpz_mul_si(r, a, v as c_long) }, |r, a, v| unsafe { embedded::mpz_mul_si(r, a, v as c_long) }),
    ];

    /// `op` on an operand of `x` limbs with that sign and `v`, r apart with
    /// room for 0, 1, x.len() or 16 limbs, or r = a: r's size, room and
    /// limbs.
    fn limb_result_by(op: LimbOp, x: &[mp_limb_t], negative: bool, v: mp_limb_t, placement: usize) -> (c_int, c_int, Vec<mp_limb_t>) {
        let mut a = number(x, negative, 0);
        let mut r = match placement {
            0..=3 => number(&[], false, [0, 1, x.len(), 16][placement]),
            _ => number(&[], false, 0),
        };
        // SAFETY: both initialised; r = a as GMP allows it.
        unsafe {
            if placement < 4 {
                op(r.m(), a.p(), v);
            } else {
                op(a.m(), a.p(), v);
                r = a;
            }
        }
        (r.0._mp_size, r.0._mp_alloc, r.limbs().to_vec())
    }

    #[test]
    fn small_limb_operations_are_gmps() {
        let mut state = 0x2545_f491_4f6c_dd1d;
        let mut cases = 0;
        for x_len in [0, 1, 2, 3, 4, 5, 6, 9, 16, 17, 18, 40, 100, 257, 300] {
            for fill in 0..4 {
                // All ones; random; random under a top limb of 1; a power
                // of the base (borrows through).
                let mut x = match fill {
                    0 => vec![mp_limb_t::MAX; x_len],
                    3 => (0..x_len).map(|k| mp_limb_t::from(k + 1 == x_len)).collect(),
                    _ => random_limbs(&mut state, x_len),
                };
                if let Some(top) = x.last_mut() {
                    *top = if fill == 2 { 1 } else { (*top).max(1) };
                }
                let low = x.first().copied().unwrap_or(0);
                let random = random_limbs(&mut state, 1)[0];
                // Zero, one, the extremes of either reading, a's low limb
                // and its neighbours (differences of zero and of one).
                let values = [0, 1, 2, mp_limb_t::MAX, mp_limb_t::MAX - 1, 1 << 63, (1 << 63) - 1, random, low, low.wrapping_add(1), low.wrapping_sub(1)];
                for negative in [false, true] {
                    for v in values {
                        for placement in 0..5 {
                            for (name, ours, gmps) in LIMB_OPS {
                                let want = limb_result_by(gmps, &x, negative, v, placement);
                                let got = limb_result_by(ours, &x, negative, v, placement);
                                assert_eq!(got, want, "{name}: {x_len} limbs, fill {fill}, negative {negative}, v {v:#x}, placement {placement}");
                                cases += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 15 * 4 * 2 * 11 * 5 * 4);
    }

    /// `mpz_set`, `mpz_neg` and `mpz_abs` against GMP's: lengths at each
    /// of [`copy_rest`]'s ways (none, one limb, 16-byte moves of 2 to 4, 5
    /// to 8 and 9 to 16 limbs, GMP's own beyond), both signs, r apart with
    /// room for 0, 1, len - 1, len or 40 limbs, and r = a.
    #[test]
    fn sets_are_gmps() {
        type Set = unsafe fn(mpz_ptr, mpz_srcptr);
        let sets: [(&str, Set, Set); 3] = [
            ("set", |r, a| unsafe { mpz_set(r, a) }, |r, a| unsafe { embedded::mpz_set(r, a) }),
            ("neg", |r, a| unsafe { mpz_neg(r, a) }, |r, a| unsafe { embedded::mpz_neg(r, a) }),
            ("abs", |r, a| unsafe { mpz_abs(r, a) }, |r, a| unsafe { embedded::mpz_abs(r, a) }),
        ];
        let mut state = 0x6a09_e667_f3bc_c908;
        let mut cases = 0;
        for len in [0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 17, 33] {
            let mut x = random_limbs(&mut state, len);
            if let Some(top) = x.last_mut() {
                *top = (*top).max(1);
            }
            for negative in [false, true] {
                for placement in 0..6 {
                    let by = |set: Set| {
                        let mut a = number(&x, negative, 0);
                        let mut r = number(&[7], false, [0, 1, len.saturating_sub(1), len, 40, 0][placement]);
                        // SAFETY: both initialised; r = a as GMP allows it.
                        unsafe {
                            if placement < 5 {
                                set(r.m(), a.p());
                            } else {
                                set(a.m(), a.p());
                                r = a;
                            }
                        }
                        (r.0._mp_size, r.0._mp_alloc, r.limbs().to_vec())
                    };
                    for (name, ours, gmps) in sets {
                        assert_eq!(by(ours), by(gmps), "{name}: {len} limbs, negative {negative}, placement {placement}");
                        cases += 1;
                    }
                }
            }
        }
        assert_eq!(cases, 13 * 2 * 6 * 3);
    }

    #[test]
    fn small_products_and_sums_are_gmps() {
        let shapes: Vec<(usize, usize)> = (0..=5).flat_map(|x| (0..=5).map(move |y| (x, y))).collect();
        assert_eq!(compare_with_gmps(&shapes, &OPS), 6 * 6 * 7 * 4 * 8 * 3);
    }

    /// The sums of operands as long, 5 to 32 limbs ([`wide_sum`]), of
    /// unlike lengths ([`long_sum`]: the shorter 0 to 33 limbs, around
    /// [`CHAINS`]' end; the longer's rest of 1 to 8 limbs by moves, more by
    /// `memcpy` and around [`COPY_LOOP_FROM`]), and of longer operands as
    /// long (GMP's own path), against GMP's.
    #[test]
    fn wide_sums_are_gmps() {
        let mut shapes: Vec<(usize, usize)> = (5..=33).map(|n| (n, n)).collect();
        shapes.extend([(8, 5), (5, 8), (16, 15), (15, 16), (17, 16), (16, 1), (4, 16), (0, 7), (7, 0), (20, 3), (21, 6), (30, 29)]);
        shapes.extend([(63, 63), (64, 64), (64, 1), (1, 64), (63, 64), (64, 61), (65, 65), (65, 64), (70, 3)]);
        shapes.extend([(5, 0), (9, 1), (10, 1), (33, 32), (32, 33), (34, 33), (41, 33), (42, 32), (40, 31), (100, 8), (8, 100)]);
        // The rest 255, 256 and 257 limbs: either side of COPY_LOOP_FROM.
        shapes.extend([(258, 3), (3, 259), (261, 4)]);
        assert_eq!(compare_with_gmps(&shapes, &OPS[1..]), 64 * 7 * 4 * 8 * 2);
    }

    /// The products where both operands have 3 to 16 limbs outside the
    /// 16 shapes ([`schoolbook`]), and the lengths around them (GMP's own
    /// path), against GMP's.
    #[test]
    fn schoolbook_products_are_gmps() {
        let mut shapes: Vec<(usize, usize)> = (4..=17).map(|n| (n, n)).collect();
        shapes.extend([(5, 1), (1, 5), (16, 2), (3, 16), (16, 3), (16, 15), (9, 16), (17, 16), (16, 17), (5, 4), (4, 5), (0, 9), (9, 0), (30, 3)]);
        assert_eq!(compare_with_gmps(&shapes, &OPS[..1]), 28 * 7 * 4 * 8);
    }

    /// Each of `ops` (ours against GMP's) on operands of each pair of
    /// lengths in `shapes`: seven fills, four signs, eight placements. The
    /// cases compared.
    fn compare_with_gmps(shapes: &[(usize, usize)], ops: &[(&str, MpzOp, MpzOp)]) -> usize {
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let mut cases = 0;
        for &(x_len, y_len) in shapes {
            for fill in 0..7 {
                // All ones; random; random under a top limb of 1; y x's
                // low limbs (equal magnitudes where as long); x a power of
                // the base and y all ones (borrows through); y x's limbs
                // but the lowest (the difference's top limbs cancel); x
                // twice a power of the base and y all ones under a top
                // limb of 1 (as long, a difference of 1).
                let x = match fill {
                    0 => vec![mp_limb_t::MAX; x_len],
                    4 => (0..x_len).map(|k| mp_limb_t::from(k + 1 == x_len)).collect(),
                    6 => (0..x_len).map(|k| 2 * mp_limb_t::from(k + 1 == x_len)).collect(),
                    _ => random_limbs(&mut state, x_len),
                };
                let mut y = match fill {
                    0 | 4 | 6 => vec![mp_limb_t::MAX; y_len],
                    3 => x.iter().copied().chain(random_limbs(&mut state, y_len)).take(y_len).collect(),
                    5 => x.iter().enumerate().map(|(k, &l)| if k == 0 { l ^ 1 } else { l }).chain(random_limbs(&mut state, y_len)).take(y_len).collect(),
                    _ => random_limbs(&mut state, y_len),
                };
                let mut x = x;
                for v in [&mut x, &mut y] {
                    if let Some(top) = v.last_mut() {
                        *top = if fill == 2 || (fill == 6 && *top == mp_limb_t::MAX) { 1 } else { (*top).max(1) };
                    }
                }
                for signs in [(false, false), (false, true), (true, false), (true, true)] {
                    for placement in 0..8 {
                        for &(name, ours, gmps) in ops {
                            let want = result_by(gmps, &x, &y, signs, placement);
                            let got = result_by(ours, &x, &y, signs, placement);
                            assert_eq!(got, want, "{name}: {x_len} and {y_len} limbs, fill {fill}, signs {signs:?}, placement {placement}");
                            cases += 1;
                        }
                    }
                }
            }
        }
        cases
    }

    /// `n` limbs of a xorshift sequence from `state`.
    fn random_limbs(state: &mut u64, n: usize) -> Vec<mp_limb_t> {
        (0..n)
            .map(|_| {
                *state ^= *state << 13;
                *state ^= *state >> 7;
                *state ^= *state << 17;
                *state
            })
            .collect()
    }

    /// GMP's one-thread `r op x` over x's limbs, the carry or borrow
    /// carried on through r: what `linear_into` must give.
    fn linear_by_gmp(r: &mut [mp_limb_t], x: &[mp_limb_t], op: Linear) -> mp_limb_t {
        let (rp, xp, n) = (r.as_mut_ptr(), x.as_ptr(), x.len() as mp_size_t);
        // SAFETY: r in place, x apart, x.len() <= r.len(), both >= 1.
        let c = unsafe {
            match op {
                Linear::Add => embedded::mpn_add_n(rp, rp, xp, n),
                Linear::Sub => embedded::mpn_sub_n(rp, rp, xp, n),
                Linear::SubFrom => embedded::mpn_sub_n(rp, xp, rp, n),
            }
        };
        let rest = &mut r[x.len()..];
        if op == Linear::Add { carry_on(rest, c) } else { borrow_on(rest, c) }
    }

    /// The threaded sums and differences equal GMP's one-thread ones:
    /// random limbs, and limbs that carry or borrow through whole pieces
    /// and out of r (all ones plus one, zero minus one), with r longer
    /// than x and as long.
    #[test]
    fn sums_and_differences_on_threads_match_gmp() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let n = THREADED_LIMBS + 12_345;
        let random = random_limbs(&mut state, n + 77);
        let ones = vec![mp_limb_t::MAX; n + 77];
        let zeros = vec![0; n + 77];
        let mut one = vec![0; n];
        one[0] = 1;
        let mut piece_ends = random_limbs(&mut state, n);
        // Ones where every piece but the first starts, so a piece's carry runs on.
        for k in (0..8).map(|t| t * n / 8 + 1) {
            piece_ends[k..(k + 64).min(n)].fill(mp_limb_t::MAX);
        }
        let x_random = random_limbs(&mut state, n);
        let (ones_n, zeros_n) = (ones[..n].to_vec(), zeros[..n].to_vec());
        let cases = [
            (Linear::Add, &random, &x_random),
            (Linear::Add, &ones, &one),
            (Linear::Add, &piece_ends, &ones_n),
            (Linear::Add, &ones_n, &one),
            (Linear::Sub, &random, &x_random),
            (Linear::Sub, &zeros, &one),
            (Linear::Sub, &zeros_n, &ones_n),
            (Linear::Sub, &piece_ends, &x_random),
            (Linear::SubFrom, &x_random, &random[..n].to_vec()),
            (Linear::SubFrom, &ones_n, &zeros_n),
            (Linear::SubFrom, &one, &zeros_n),
        ];
        for (op, r, x) in cases {
            let mut want = r.clone();
            let want_carry = linear_by_gmp(&mut want, x, op);
            let mut got = r.clone();
            let got_carry = linear_into(&mut got, x, op);
            assert!(got == want && got_carry == want_carry, "{} limbs and {} ({})", r.len(), x.len(), ["+", "-", "from"][op as usize]);
        }
        // add_into takes the threaded path at this size: the carry runs
        // through all of r and out.
        let mut got = ones.clone();
        assert_eq!(add_into(&mut got, &one), 1);
        assert!(got.iter().all(|&l| l == 0));
    }

    /// GMP's mpn_add_n, mpn_sub_n, mpn_lshift and mpn_rshift on threads
    /// equal them on one thread: the result apart from both operands, in
    /// place of either, carries through pieces and out of the top, shifts
    /// by 1, 37 and 63 bits apart and in place.
    #[test]
    fn mpn_sums_and_shifts_on_threads_match_gmp() {
        let mut state = 0x1111_2222_3333_4444u64;
        let n = THREADED_LIMBS + 4321;
        let (u, v) = (random_limbs(&mut state, n), random_limbs(&mut state, n));
        let (ones, mut one) = (vec![mp_limb_t::MAX; n], vec![0; n]);
        one[0] = 1;
        for (a, b) in [(&u, &v), (&ones, &one), (&one, &ones)] {
            for subtract in [false, true] {
                let mut want = vec![0; n];
                // SAFETY: each call's limbs as GMP takes them (n >= 1; the
                // result apart, or in place of one operand).
                let want_carry = unsafe {
                    if subtract {
                        embedded::mpn_sub_n(want.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n as mp_size_t)
                    } else {
                        embedded::mpn_add_n(want.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n as mp_size_t)
                    }
                };
                let mut apart = vec![7; n];
                let (mut first, mut second) = (a.clone(), b.clone());
                // SAFETY: n limbs each; apart, in place of the first, of the second.
                unsafe {
                    assert_eq!(add_or_sub_n(apart.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n, subtract), want_carry);
                    assert_eq!(add_or_sub_n(first.as_mut_ptr(), first.as_ptr(), b.as_ptr(), n, subtract), want_carry);
                    assert_eq!(add_or_sub_n(second.as_mut_ptr(), a.as_ptr(), second.as_ptr(), n, subtract), want_carry);
                }
                assert!(apart == want && first == want && second == want, "subtract {subtract}");
            }
        }
        for cnt in [1, 37, 63] {
            for left in [true, false] {
                let mut want = vec![0; n];
                // SAFETY: as GMP takes them.
                let want_out = unsafe {
                    if left {
                        embedded::mpn_lshift(want.as_mut_ptr(), u.as_ptr(), n as mp_size_t, cnt)
                    } else {
                        embedded::mpn_rshift(want.as_mut_ptr(), u.as_ptr(), n as mp_size_t, cnt)
                    }
                };
                let (mut apart, mut in_place) = (vec![7; n], u.clone());
                // SAFETY: n limbs each; apart, and in place.
                unsafe {
                    assert_eq!(shift_n(apart.as_mut_ptr(), u.as_ptr(), n, cnt, left), want_out);
                    assert_eq!(shift_n(in_place.as_mut_ptr(), in_place.as_ptr(), n, cnt, left), want_out);
                }
                assert!(apart == want && in_place == want, "shift by {cnt}, left {left}");
            }
        }
    }

    /// Negation is GMP's 0 - r, and the threaded comparison finds one
    /// differing limb anywhere, at one thread's sizes and several's.
    #[test]
    fn negations_and_comparisons_match_gmp() {
        let mut state = 0x0123_4567_89ab_cdefu64;
        for n in [1, 2, 300, THREADED_LIMBS + 77] {
            let mut r = random_limbs(&mut state, n);
            r[0] = 0; // the +1 carries past the bottom limb
            let mut want = r.clone();
            linear_into(&mut want, &vec![0; n], Linear::SubFrom);
            let mut got = r.clone();
            negate(&mut got);
            assert!(got == want, "-r of {n} limbs");
            assert!(limbs_equal(&r, &r.clone()) && !limbs_equal(&r, &r[..n - 1]), "{n} limbs against themselves");
            for at in [0, n / 2, n - 1] {
                let mut other = r.clone();
                other[at] ^= 1 << 40;
                assert!(!limbs_equal(&r, &other), "{n} limbs, one differing at {at}");
            }
        }
    }

    /// Shifts equal GMP's (mpz_mul_2exp, mpz_fdiv_q_2exp of the magnitude),
    /// on one thread and on several, by whole limbs and by bits, into a
    /// destination cut short and one longer than the result.
    #[test]
    fn shifts_match_gmp() {
        use crate::gmp::mpz::{view, Int};
        let mut state = 0x7777_1234_abcd_0001u64;
        for n in [1, 5, 300, THREADED_LIMBS + 999] {
            let mut src = random_limbs(&mut state, n);
            src[n - 1] |= 1 << 63;
            let x = view(&src);
            for by in [0i64, 1, 63, 64, 65, 640, 12_345, 19_200_007, -1, -63, -64, -65, -640, -12_345, -19_200_007] {
                let mut want = Int::new();
                // SAFETY: want initialised, x a view of src.
                unsafe {
                    if by >= 0 {
                        embedded::mpz_mul_2exp(want.m(), &x, by as u64);
                    } else {
                        embedded::mpz_fdiv_q_2exp(want.m(), &x, by.unsigned_abs());
                    }
                }
                let want = want.limbs().to_vec();
                for len in [want.len(), want.len() + 3, want.len() / 2] {
                    let mut got = vec![0x5555; len];
                    shift_into(&mut got, &src, by);
                    let mut expect = want.clone();
                    expect.resize(len, 0);
                    assert!(got == expect, "{n} limbs shifted by {by} into {len}");
                }
            }
        }
    }

    /// A product from halves (`halves_by`, each half by GMP) equals GMP's
    /// whole product, at sizes whose sums and copies run on threads, with
    /// the shorter operand longer than a half and shorter, and with
    /// all-ones operands, whose halves' sum carries through the top.
    #[test]
    fn products_from_halves_match_gmp() {
        let mut state = 0x0bad_cafe_1234_5678u64;
        let n = THREADED_LIMBS + 1001;
        let (a, b) = (random_limbs(&mut state, n), random_limbs(&mut state, n - 17));
        let (ones_a, ones_b) = (vec![mp_limb_t::MAX; n], vec![mp_limb_t::MAX; n / 3]);
        for (u, v) in [(&a, &b), (&a, &b[..300].to_vec()), (&ones_a, &ones_b), (&ones_a, &ones_a)] {
            let mut want = vec![0; u.len() + v.len()];
            mul(&mut want, u, v);
            let mut got = vec![7; u.len() + v.len()];
            let made = halves_by(&mut got, u, v, u.len().div_ceil(2), |parts| {
                parts.into_iter().for_each(|(o, x, y)| mul(o, x, y));
                Some(())
            });
            assert!(made.is_some() && got == want, "{} x {} limbs from halves", u.len(), v.len());
        }
    }

    /// Products shared with the helpers equal GMP's: balanced and odd
    /// sizes, unbalanced ones (both ways of cutting), squares, operands
    /// whose halves are equal or all ones (the differences' signs and
    /// zeros), with helpers and on this thread alone.
    #[test]
    fn products_on_cores_match_gmp() {
        helpers::set_helpers(2);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut limbs = |n: usize| random_limbs(&mut state, n);
        let shapes = [(2, 1), (2, 2), (3, 2), (3, 3), (7, 5), (64, 64), (65, 33), (65, 32), (300, 151), (511, 300), (512, 512), (1023, 1000), (1000, 17), (4000, 700)];
        for (an, bn) in shapes {
            let (a, b) = (limbs(an), limbs(bn));
            let mut halves_equal = limbs(an);
            let k = an.div_ceil(2);
            let (lo, hi) = halves_equal.split_at_mut(k);
            hi.copy_from_slice(&lo[..an - k]);
            let ones = vec![mp_limb_t::MAX; an];
            let mut low_zero = limbs(an);
            low_zero[..k].fill(0);
            for (a, b) in [(&a, &b), (&halves_equal, &b), (&ones, &vec![mp_limb_t::MAX; bn]), (&low_zero, &b), (&b, &a)] {
                let mut want = vec![0; an + bn];
                mul(&mut want, a, b);
                for twice in [false, true] {
                    let mut got = vec![7; an + bn];
                    mul_cut(&mut got, a, b, twice);
                    assert!(got == want, "{} x {} limbs, twice {twice}", a.len(), b.len());
                }
            }
            for a in [&a, &halves_equal, &ones, &low_zero] {
                let mut want = vec![0; 2 * an];
                mul(&mut want, a, a);
                for twice in [false, true] {
                    let mut got = vec![7; 2 * an];
                    mul_cut(&mut got, a, a, twice);
                    assert!(got == want, "{an} limbs squared, twice {twice}");
                }
            }
        }
    }

    #[test]
    fn product_by_mulmod_bnm1_is_the_product() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut limbs = |n: usize| random_limbs(&mut state, n);
        // Small, GMP's recursion's sizes, the shapes of its gcd at 10^4
        // limbs, all-ones operands; then squares (one operand twice).
        for (an, bn) in [(1, 1), (5, 3), (300, 100), (3218, 804), (6666, 1666), (4999, 2499)] {
            let (a, b) = (limbs(an), limbs(bn));
            let (ones_a, ones_b) = (vec![mp_limb_t::MAX; an], vec![mp_limb_t::MAX; bn]);
            for (a, b) in [(&a, &b), (&ones_a, &ones_b)] {
                let mut want = vec![0; an + bn];
                mul(&mut want, a, b);
                let mut got = vec![7; an + bn];
                // SAFETY: got holds an + bn limbs apart from a and b.
                unsafe { product_by_mulmod_bnm1(got.as_mut_ptr(), a.as_ptr(), an, b.as_ptr(), bn) };
                assert!(got == want, "{an} x {bn} limbs");
            }
            let mut want = vec![0; 2 * an];
            mul(&mut want, &a, &a);
            let mut got = vec![7; 2 * an];
            // SAFETY: as above, the one operand twice.
            unsafe { product_by_mulmod_bnm1(got.as_mut_ptr(), a.as_ptr(), an, a.as_ptr(), an) };
            assert!(got == want, "{an} limbs squared");
        }
    }
}
