//! Schoolbook products in 52-bit digits on AVX-512 IFMA: the CPU engine's
//! replacement for GMP's `mpn_mul_basecase` and for its Karatsuba and
//! Toom-3 levels at the sizes where one schoolbook pass of these is faster
//! (RESULTS.md, "Schoolbook products on AVX-512 IFMA").
//!
//! GMP multiplies 64-bit limbs with one `mulx` at a time. `vpmadd52luq` and
//! `vpmadd52huq` make eight 52 x 52-bit products a instruction, low and
//! high halves apart, and add them into 64-bit lanes: up to 2^12 of them
//! fit a lane before it can overflow. So the operands are cut into 52-bit
//! digits, each output column's low and high halves are summed in
//! registers, the columns' carries are resolved eight at a time with bit
//! masks (`normalise`), and the digits are packed back into limbs. The
//! columns' sums are made one of two ways, whichever makes fewer digit
//! products for the shape: passes of 32 columns against every digit that
//! meets them (`digits_of`), or, where the shorter operand fits in the
//! registers, a window of it moved along the longer eight digits at a time
//! (`digits_by_window`).
//!
//! It owns the kernels and the sizes they take from GMP; it works on limb
//! slices, with the embedded GMP's additions for a product made in pieces.
//! src/gmp/dispatch.rs writes GMP's dispatch table for [`install`].

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

#[cfg(target_arch = "x86_64")]
use crate::gmp::dispatch::{self, Slot};
use crate::gmp::{embedded, mp_limb_t, mp_size_t};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The longest shorter operand (limbs) the kernel takes; GMP's own loops
/// keep longer ones.
const V_MAX: usize = 256;
/// The longer operand goes through the kernel in pieces of at most this many
/// limbs, each against the whole shorter one.
const PIECE: usize = 256;

const M52: u64 = (1 << 52) - 1;

/// 52-bit digits of `limbs` limbs.
const fn digits(limbs: usize) -> usize {
    (64 * limbs).div_ceil(52)
}

const fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Digits of a piece, of the shorter operand, and output columns, each with
/// room for whole vectors and the zeros the loops read past the end.
const PIECE_DIGITS: usize = round_up(digits(PIECE), 8);
const V_DIGITS: usize = round_up(digits(V_MAX), 8);
const COLUMNS: usize = round_up(PIECE_DIGITS + V_DIGITS, 32);
/// Zeros before a piece's digits: a pass over 32 columns reads up to 31
/// digits below its first column.
const FRONT: usize = 32;
/// Zeros after the digits: up to 31 beyond the last (passes), 16 (packing).
const BACK: usize = 40;

/// GMP's `mpn_mul_basecase`, which [`install`] replaced, for the sizes the
/// kernel leaves to it.
static GMP_MUL: AtomicUsize = AtomicUsize::new(0);
/// Whether [`install`] put the kernel in place.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Where the kernel takes GMP's products, from A/B runs against GMP's own
/// loops (RESULTS.md, "Schoolbook products on AVX-512 IFMA"): schoolbook
/// products whose shorter operand has at least MUL_FROM limbs and that
/// make at least MUL_FROM_PRODUCTS limb products (below, the digits'
/// fixed cost is not repaid), or ZEN_MUL_FROM_PRODUCTS on AMD's Zen 3
/// and later (measured on Zen 4, whose 512-bit instructions run as two
/// halves: 14 x 14, 24 x 8 and 20 x 10 limbs took 0.82x to 0.96x GMP's
/// loops, 16 x 16, 32 x 8 and 26 x 10 0.99x to 1.08x); squares of WHOLE_SQR_FROM limbs
/// and more (below, GMP's square, which makes each cross product once,
/// wins); whole Karatsuba and Toom-3 levels up to V_MAX limbs.
const MUL_FROM: usize = 8;
const MUL_FROM_PRODUCTS: usize = 192;
const ZEN_MUL_FROM_PRODUCTS: usize = 256;
const WHOLE_SQR_FROM: usize = 64;

/// The limb products from which the kernel takes a schoolbook product on
/// this processor ([`install`] sets it).
static FROM_PRODUCTS: AtomicUsize = AtomicUsize::new(MUL_FROM_PRODUCTS);

#[cfg(target_arch = "x86_64")]
type MulFn = unsafe extern "C" fn(*mut mp_limb_t, *const mp_limb_t, mp_size_t, *const mp_limb_t, mp_size_t);

/// Puts the kernel in the embedded GMP's place for its schoolbook products
/// (`mul_basecase` in GMP's dispatch table) and, through the hooks on
/// its Karatsuba and Toom-3 levels (src/abi/hooks.rs), for whole products
/// and squares ([`mul_whole`], [`sqr_whole`]), where the processor has the
/// instructions and `CUGMP_CPU_IFMA` is not 0. Called once, from the
/// load-time constructor.
pub fn install() {
    if !crate::config::get().cpu_ifma || !available() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if crate::gmp::cpuid::this_is_zen3_or_later() {
            FROM_PRODUCTS.store(ZEN_MUL_FROM_PRODUCTS, Ordering::Relaxed);
        }
        GMP_MUL.store(dispatch::replace(Slot::MulBasecase, mul_basecase as MulFn as usize), Ordering::Release);
        INSTALLED.store(true, Ordering::Release);
    }
}

/// Whether the kernel takes GMP's small products in this process.
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// `{rp, un + vn} = {up, un} * {vp, vn}` (`un >= vn >= 1`, rp apart) by the
/// kernel where it takes a whole product of this size in place of GMP's
/// Karatsuba or Toom-3 level; false where it does not (nothing written).
///
/// # Safety
/// The pointers hold the limbs the sizes say.
pub unsafe fn mul_whole(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) -> bool {
    let v = vn as usize;
    if v == 0 || v > V_MAX || un < vn || !installed() {
        return false;
    }
    // SAFETY: the caller's limbs; installed() only where install found the
    // processor's features.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        mul(rp, up, un as usize, vp, v)
    };
    true
}

/// The longest shorter operand (limbs) for which the kernel takes GMP's
/// Toom levels for operands of unlike lengths whole: below it one
/// schoolbook pass beats GMP's pieces (whose products of a third or a
/// quarter of the shorter operand are too small for the kernel to repay
/// its digits), from about 160 limbs GMP's Toom wins (RESULTS.md,
/// "Schoolbook products on AVX-512 IFMA").
const UNBALANCED_WHOLE_TO: usize = 128;

/// [`mul_whole`] for GMP's Toom levels of unlike lengths (`toom32`,
/// `toom42`, `toom43`, `toom53`, `toom63`), where the shorter operand has
/// at most [`UNBALANCED_WHOLE_TO`] limbs; false where it does not take the
/// product (nothing written).
///
/// # Safety
/// As [`mul_whole`].
pub unsafe fn mul_unbalanced_whole(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) -> bool {
    // SAFETY: as the caller promises.
    vn as usize <= UNBALANCED_WHOLE_TO && unsafe { mul_whole(rp, up, un, vp, vn) }
}

/// `{rp, 2n} = {up, n}^2` by the kernel where it takes a whole square of
/// this size; false where it does not.
///
/// # Safety
/// As [`mul_whole`].
pub unsafe fn sqr_whole(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t) -> bool {
    let m = n as usize;
    if !(WHOLE_SQR_FROM..=V_MAX).contains(&m) || !installed() {
        return false;
    }
    // SAFETY: as in mul_whole.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        sqr(rp, up, m)
    };
    true
}

/// GMP's `mpn_mul_basecase`: `{rp, un + vn} = {up, un} * {vp, vn}`, `un >=
/// vn >= 1`.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn mul_basecase(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) {
    let (u, v) = (un as usize, vn as usize);
    // Where the kernel's fixed cost (the digits, the packing) is repaid:
    // RESULTS.md, "Schoolbook products on AVX-512 IFMA".
    if (MUL_FROM..=V_MAX).contains(&v) && u * v >= FROM_PRODUCTS.load(Ordering::Relaxed) {
        // SAFETY: GMP's arguments; install checked the processor.
        unsafe { mul(rp, up, u, vp, v) }
    } else {
        // SAFETY: install stored GMP's function of this type before
        // putting this one in its place.
        unsafe { std::mem::transmute::<usize, MulFn>(GMP_MUL.load(Ordering::Acquire))(rp, up, un, vp, vn) }
    }
}

/// Whether this processor runs the kernel: AVX-512 F, IFMA and VBMI2.
#[cfg(target_arch = "x86_64")]
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512ifma") && std::arch::is_x86_feature_detected!("avx512vbmi2")
}

#[cfg(not(target_arch = "x86_64"))]
pub fn available() -> bool {
    false
}

/// `{rp, un + vn} = {up, un} * {vp, vn}` as GMP's `mpn_mul_basecase` takes
/// it: `un >= vn >= 1`, `vn <= V_MAX`, `rp` apart from both operands.
///
/// # Safety
/// The pointers hold the limbs the sizes say; the processor has
/// [`available`]'s features.
#[cfg(target_arch = "x86_64")]
pub unsafe fn mul(rp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize) {
    debug_assert!(un >= vn && (1..=V_MAX).contains(&vn));
    // SAFETY: as the caller promises.
    unsafe { mul_digits(rp, up, un, vp, vn) }
}

/// `{rp, 2n} = {up, n}^2`, `1 <= n <= V_MAX`, `rp` apart from `up`: each
/// cross product of two digits made once and doubled, the squares of the
/// digits added on the diagonal.
///
/// # Safety
/// As [`mul`].
#[cfg(target_arch = "x86_64")]
pub unsafe fn sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: usize) {
    debug_assert!((1..=V_MAX).contains(&n));
    // SAFETY: as the caller promises.
    unsafe { sqr_digits(rp, up, n) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn sqr_digits(rp: *mut mp_limb_t, up: *const mp_limb_t, n: usize) {
    let mut a = [const { MaybeUninit::<u64>::uninit() }; FRONT + V_DIGITS + BACK];
    let mut lo = [const { MaybeUninit::<u64>::uninit() }; COLUMNS + BACK];
    let mut hi = [const { MaybeUninit::<u64>::uninit() }; COLUMNS];
    let (a, lo, hi) = (a.as_mut_ptr().cast::<u64>(), lo.as_mut_ptr().cast::<u64>(), hi.as_mut_ptr().cast::<u64>());
    // SAFETY: buffers sized for V_MAX limbs as in mul_digits.
    unsafe {
        let na = operand_digits(a, up, n);
        let columns = round_up(2 * na, 32);
        square_columns_of(lo, hi, a.add(FRONT), na, columns);
        columns_to_limbs(rp, 2 * n, lo, hi, columns);
    }
}

/// The digits of `{src, n}` at `a + FRONT`, with the zeros the passes read
/// before them (FRONT) and after their last vector (BACK); returns their
/// count.
///
/// # Safety
/// `a` holds FRONT + the digits rounded to a vector + BACK words.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn operand_digits(a: *mut u64, src: *const mp_limb_t, n: usize) -> usize {
    // SAFETY: as the caller promises.
    unsafe {
        a.write_bytes(0, FRONT);
        let na = to_digits(a.add(FRONT), src, n);
        a.add(FRONT + round_up(na, 8)).write_bytes(0, BACK);
        na
    }
}

/// `{out, n}` from the column sums of `columns` columns in `lo` and `hi`
/// (`lo` with room for 16 words more, which the packing reads).
///
/// # Safety
/// As that says; `out` holds n limbs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn columns_to_limbs(out: *mut mp_limb_t, n: usize, lo: *mut u64, hi: *const u64, columns: usize) {
    // SAFETY: as the caller promises.
    unsafe {
        normalise(lo, hi, columns);
        digits_to_limbs(out, n, lo, columns);
    }
}

/// `{out, n}` from the product's digits, `columns` of them in `digits`
/// (with room for 16 words more, which the packing reads).
///
/// # Safety
/// As that says; `out` holds n limbs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn digits_to_limbs(out: *mut mp_limb_t, n: usize, digits: *mut u64, columns: usize) {
    // SAFETY: as the caller promises.
    unsafe {
        digits.add(columns).write_bytes(0, 16);
        pack(out, n, digits);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn mul_digits(rp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize) {
    // Left unwritten but for the zeros the loops read: zeroing these
    // buffers whole a call would cost as much as a small product.
    let mut b = [const { MaybeUninit::<u64>::uninit() }; FRONT + V_DIGITS + BACK];
    let mut a = [const { MaybeUninit::<u64>::uninit() }; FRONT + PIECE_DIGITS + BACK];
    let mut digits = [const { MaybeUninit::<u64>::uninit() }; COLUMNS + BACK];
    let mut piece_out = [const { MaybeUninit::<u64>::uninit() }; PIECE + V_MAX + 8];
    let (b, a, digits) = (b.as_mut_ptr().cast::<u64>(), a.as_mut_ptr().cast::<u64>(), digits.as_mut_ptr().cast::<u64>());
    let piece_out = piece_out.as_mut_ptr().cast::<u64>();
    // SAFETY: every buffer is sized by the constants above for pieces of
    // at most PIECE limbs against at most V_MAX; the pointers are the
    // caller's.
    unsafe {
        let nb = operand_digits(b, vp, vn);
        let b = b.add(FRONT);
        let mut done = 0;
        while done < un {
            let pn = (un - done).min(PIECE);
            let na = operand_digits(a, up.add(done), pn);
            let a = a.add(FRONT);
            let rn = pn + vn;
            let out = if done == 0 { rp } else { piece_out };
            let columns = match window_vectors(na, nb) {
                Some(v) if na <= nb => digits_by_window(v, digits, b, nb, a),
                Some(v) => digits_by_window(v, digits, a, na, b),
                None => {
                    let columns = round_up(na + nb, 32);
                    digits_of(digits, a, na, b, nb, columns);
                    columns
                }
            };
            digits_to_limbs(out, rn, digits, columns);
            if done > 0 {
                // This piece's product goes in at `done` limbs, over the top
                // vn limbs of the product so far.
                let at = rp.add(done);
                let cy = embedded::mpn_add_n(at, at, out, vn as mp_size_t);
                let cy = embedded::mpn_add_1(at.add(vn), out.add(vn), (rn - vn) as mp_size_t, cy);
                debug_assert_eq!(cy, 0);
            }
            done += pn;
        }
    }
}

/// The 52-bit digits of `{src, n}` into `dst` (as many as [`digits`] says,
/// then zeros to the end of the last vector); returns the count.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn to_digits(dst: *mut u64, src: *const mp_limb_t, n: usize) -> usize {
    // Eight digits are 416 bits: 6.5 limbs. A vector of them starts at a
    // limb boundary (even vectors) or 32 bits into one (odd vectors).
    const EVEN_AT: [i64; 8] = [0, 0, 1, 2, 3, 4, 4, 5];
    const EVEN_SHIFT: [i64; 8] = [0, 52, 40, 28, 16, 4, 56, 44];
    const ODD_AT: [i64; 8] = [0, 1, 2, 2, 3, 4, 5, 6];
    const ODD_SHIFT: [i64; 8] = [32, 20, 8, 60, 48, 36, 24, 12];
    let nd = digits(n);
    let m52 = _mm512_set1_epi64(M52 as i64);
    let one = _mm512_set1_epi64(1);
    // SAFETY: the constants are eight i64 each; loads stop at limb n by
    // their mask, stores stay within the vector that holds digit nd - 1.
    unsafe {
        let (even_at, even_shift) = (_mm512_loadu_si512(EVEN_AT.as_ptr().cast()), _mm512_loadu_si512(EVEN_SHIFT.as_ptr().cast()));
        let (odd_at, odd_shift) = (_mm512_loadu_si512(ODD_AT.as_ptr().cast()), _mm512_loadu_si512(ODD_SHIFT.as_ptr().cast()));
        let mut v = 0;
        while 8 * v < nd {
            let first = (416 * v) / 64;
            // first < n: digit 8v starts below bit 64n.
            let left = (n - first).min(8);
            let words = _mm512_maskz_loadu_epi64(((1u32 << left) - 1) as __mmask8, src.add(first).cast());
            let (at, shift) = if v % 2 == 0 { (even_at, even_shift) } else { (odd_at, odd_shift) };
            let low = _mm512_permutexvar_epi64(at, words);
            let high = _mm512_permutexvar_epi64(_mm512_add_epi64(at, one), words);
            let d = _mm512_and_si512(_mm512_shrdv_epi64(low, high, shift), m52);
            _mm512_storeu_si512(dst.add(8 * v).cast(), d);
            v += 1;
        }
    }
    nd
}

/// A pass's sums: the low halves of 32 columns' digit products in four
/// vectors, then their high halves in four.
#[cfg(target_arch = "x86_64")]
type Pass = [__m512i; 8];

/// Adds to `pass` the products of the digit in every lane of `bj` with the
/// 32 digits at `p`: with MASKED, only in the lanes `masks` gives (one mask
/// a vector; the unmasked instructions otherwise, which keep the loop
/// tighter).
///
/// # Safety
/// 32 digits readable at `p`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
#[inline]
unsafe fn add_products<const MASKED: bool>(pass: &mut Pass, p: *const u64, bj: __m512i, masks: [__mmask8; 4]) {
    for q in 0..4 {
        // SAFETY: as the caller promises.
        let x = unsafe { _mm512_loadu_si512(p.add(8 * q).cast()) };
        if MASKED {
            pass[q] = _mm512_mask_madd52lo_epu64(pass[q], masks[q], x, bj);
            pass[4 + q] = _mm512_mask_madd52hi_epu64(pass[4 + q], masks[q], x, bj);
        } else {
            pass[q] = _mm512_madd52lo_epu64(pass[q], x, bj);
            pass[4 + q] = _mm512_madd52hi_epu64(pass[4 + q], x, bj);
        }
    }
}

/// Stores `pass`, each sum doubled, at columns k .. k + 32 of `lo` and
/// `hi`.
///
/// # Safety
/// Those columns writable.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
#[inline]
unsafe fn store_doubled(lo: *mut u64, hi: *mut u64, k: usize, pass: &Pass) {
    for q in 0..4 {
        // SAFETY: as the caller promises.
        unsafe {
            _mm512_storeu_si512(lo.add(k + 8 * q).cast(), _mm512_slli_epi64(pass[q], 1));
            _mm512_storeu_si512(hi.add(k + 8 * q).cast(), _mm512_slli_epi64(pass[4 + q], 1));
        }
    }
}

const EVERY_LANE: [__mmask8; 4] = [0xff; 4];

/// The product's digits into `digits` from the column sums of digits
/// `{a, na}` and `{b, nb}`: for each column c < `columns` (a multiple of
/// 32), the low halves of the digit products a_i b_j with i + j = c and
/// the high halves of those of column c - 1, their carries resolved
/// ([`Carries`]) as each pass of 32 columns is whole. `a` has 32 zeros
/// before it and 32 after its last vector.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn digits_of(digits: *mut u64, a: *const u64, na: usize, b: *const u64, nb: usize, columns: usize) {
    let mut carries = Carries::new();
    let mut k = 0;
    while k < columns {
        let mut pass: Pass = [_mm512_setzero_si512(); 8];
        // Digits of b that meet a digit of a in columns k .. k + 32.
        for j in (k + 1).saturating_sub(na)..(k + 32).min(nb) {
            // SAFETY: k - j + 31 >= 0 - 31 and <= na + 30: inside a's zeros.
            unsafe { add_products::<false>(&mut pass, a.offset(k as isize - j as isize), _mm512_set1_epi64(*b.add(j) as i64), EVERY_LANE) };
        }
        for q in 0..4 {
            // SAFETY: digits k .. k + 32.
            unsafe { _mm512_storeu_si512(digits.add(k + 8 * q).cast(), carries.next(pass[q], pass[4 + q])) };
        }
        k += 32;
    }
    debug_assert_eq!(carries.carry, 0);
}

/// The most vectors of column sums a window kernel holds: with as many
/// again for the high halves, a broadcast digit and a loaded vector, 28 of
/// the 32 registers.
const WINDOW_MAX: usize = 13;

/// The vectors of column sums that [`digits_by_window`] holds for digits
/// `na` by `nb`, where it makes fewer digit products than [`digits_of`];
/// None where that makes fewer, or the shorter operand is too long for
/// the registers. Both count their vectors of products: digits_of's
/// passes make 32 columns against every digit of b that meets them (the
/// triangles at both ends of each pass are zeros), the window's blocks 8
/// digits of the longer operand against a window of the shorter's.
fn window_vectors(na: usize, nb: usize) -> Option<usize> {
    let (short, long) = (na.min(nb), na.max(nb));
    let v = (short + 7).div_ceil(8);
    if v > WINDOW_MAX {
        return None;
    }
    let window = 8 * long.div_ceil(8) * v;
    let passes: usize = (0..round_up(na + nb, 32)).step_by(32).map(|k| 4 * ((k + 32).min(nb).saturating_sub((k + 1).saturating_sub(na)))).sum();
    (window <= passes).then_some(v)
}

/// The product's digits into `digits`, its column sums made with the
/// shorter operand's digits `{w, ..}` held in registers: for each block of
/// eight digits of `{x, nx}` (zeros after it to the end of its last
/// vector), `v` vectors of column sums (`v` at least (w's digits + 7) / 8,
/// at most [`WINDOW_MAX`]) take the products of the eight with w, the
/// lowest vector is then whole, its carries resolved ([`Carries`]) and
/// stored, and the window moves up eight columns. Every digit product but
/// those of the block's two triangles of eight is one a column needs,
/// where a pass of [`digits_of`] makes triangles of 32. `w` has 8 zeros
/// before it and 16 after. Returns the digits written (a multiple of 8, at
/// least the product's and one more).
///
/// # Safety
/// As that says; `digits` holds them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn digits_by_window(v: usize, digits: *mut u64, x: *const u64, nx: usize, w: *const u64) -> usize {
    // SAFETY: as the caller promises (window_vectors gives v from 1 to
    // WINDOW_MAX; beyond it the widest kernel, which holds fewer).
    unsafe { WINDOW_KERNELS[v.clamp(1, WINDOW_MAX) - 1](digits, x, nx, w) }
}

/// [`digits_by_window`]'s kernels, one a window size, and their table
/// `WINDOW_KERNELS` (the kernel of v vectors at v - 1): `$name` holds `$v`
/// vectors, numbered `$q` (0 to `$v` - 1, written out so that every index
/// is a literal and the sums stay in registers).
macro_rules! window_kernels {
    ($($name:ident $v:literal [$($q:literal)*])*) => {
        #[cfg(target_arch = "x86_64")]
        const WINDOW_KERNELS: [unsafe fn(*mut u64, *const u64, usize, *const u64) -> usize; WINDOW_MAX] = [$($name),*];
        $(
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
        unsafe fn $name(digits: *mut u64, x: *const u64, nx: usize, w: *const u64) -> usize {
            let zero = _mm512_setzero_si512();
            let mut carries = Carries::new();
            let mut low = [zero; $v];
            let mut high = [zero; $v];
            let blocks = nx.div_ceil(8);
            for block in 0..blocks {
                for t in 0..8 {
                    // SAFETY: digit 8 block + t of x (zeros past nx); lane l
                    // of vector q meets digit 8q + l - t of w, from -7 to
                    // 8v - 1.
                    unsafe {
                        let d = _mm512_set1_epi64(*x.add(8 * block + t) as i64);
                        $(
                            let y = _mm512_loadu_si512(w.offset(8 * $q as isize - t as isize).cast());
                            low[$q] = _mm512_madd52lo_epu64(low[$q], y, d);
                            high[$q] = _mm512_madd52hi_epu64(high[$q], y, d);
                        )*
                    }
                }
                // SAFETY: digits 8 block .. 8 block + 8.
                unsafe { _mm512_storeu_si512(digits.add(8 * block).cast(), carries.next(low[0], high[0])) };
                $(
                    low[$q] = low.get($q + 1).copied().unwrap_or(zero);
                    high[$q] = high.get($q + 1).copied().unwrap_or(zero);
                )*
            }
            // The window's last vector is zeros now; stored too, it gives
            // the high halves of the top column a column to go to.
            $(
                // SAFETY: the digits after the blocks' own.
                unsafe { _mm512_storeu_si512(digits.add(8 * (blocks + $q)).cast(), carries.next(low[$q], high[$q])) };
            )*
            debug_assert_eq!(carries.carry, 0);
            8 * (blocks + $v)
        }
    )*};
}

window_kernels! {
    window_1 1 [0]
    window_2 2 [0 1]
    window_3 3 [0 1 2]
    window_4 4 [0 1 2 3]
    window_5 5 [0 1 2 3 4]
    window_6 6 [0 1 2 3 4 5]
    window_7 7 [0 1 2 3 4 5 6]
    window_8 8 [0 1 2 3 4 5 6 7]
    window_9 9 [0 1 2 3 4 5 6 7 8]
    window_10 10 [0 1 2 3 4 5 6 7 8 9]
    window_11 11 [0 1 2 3 4 5 6 7 8 9 10]
    window_12 12 [0 1 2 3 4 5 6 7 8 9 10 11]
    window_13 13 [0 1 2 3 4 5 6 7 8 9 10 11 12]
}

/// Column sums of the square of `{a, na}`, as [`digits_of`] makes them
/// before it resolves their carries: for each column c < `columns`, the
/// low halves into `lo[c]` and the high halves into `hi[c]` (they weigh
/// one column more), of each product a_i a_j with i > j once, doubled,
/// then of each a_i^2 in column 2i.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn square_columns_of(lo: *mut u64, hi: *mut u64, a: *const u64, na: usize, columns: usize) {
    let mut k = 0;
    while k < columns {
        let mut pass: Pass = [_mm512_setzero_si512(); 8];
        let first = (k + 1).saturating_sub(na);
        // Column k + t takes a_(k+t-j) a_j where k + t - j > j: every lane
        // while 2j < k, then fewer, none once 2j >= k + 31.
        let whole_to = k.div_ceil(2).max(first);
        let last = ((k + 30) / 2).min(na - 1);
        for j in first..whole_to.min(last + 1) {
            // SAFETY: j < na; the loads as in digits_of.
            unsafe { add_products::<false>(&mut pass, a.offset(k as isize - j as isize), _mm512_set1_epi64(*a.add(j) as i64), EVERY_LANE) };
        }
        for j in whole_to..last + 1 {
            // Lanes 8q + t with t > 2j - k - 8q: the masks' shifts, 0 (all)
            // to 8 (none).
            let at = (2 * j - k) as i32 + 1;
            let masks = [0, 1, 2, 3].map(|q| (0xffu32 << (at - 8 * q).clamp(0, 8)) as __mmask8);
            // SAFETY: as above.
            unsafe { add_products::<true>(&mut pass, a.offset(k as isize - j as isize), _mm512_set1_epi64(*a.add(j) as i64), masks) };
        }
        // SAFETY: columns k .. k + 32.
        unsafe { store_doubled(lo, hi, k, &pass) };
        k += 32;
    }
    // The diagonal: a_i^2's halves into column 2i, eight digits at a time
    // spread to the even lanes of two vectors.
    let to_even_low = _mm512_set_epi64(0, 3, 0, 2, 0, 1, 0, 0);
    let to_even_high = _mm512_set_epi64(0, 7, 0, 6, 0, 5, 0, 4);
    let mut i = 0;
    while i < na {
        // SAFETY: digits i .. i + 8 (zeros past na), columns 2i .. 2i + 16.
        unsafe {
            let x = _mm512_loadu_si512(a.add(i).cast());
            let (dl, dh) = (_mm512_madd52lo_epu64(_mm512_setzero_si512(), x, x), _mm512_madd52hi_epu64(_mm512_setzero_si512(), x, x));
            for (half, to) in [(0, to_even_low), (8, to_even_high)] {
                let (pl, ph) = (lo.add(2 * i + half), hi.add(2 * i + half));
                _mm512_storeu_si512(pl.cast(), _mm512_add_epi64(_mm512_loadu_si512(pl.cast()), _mm512_maskz_permutexvar_epi64(0x55, to, dl)));
                _mm512_storeu_si512(ph.cast(), _mm512_add_epi64(_mm512_loadu_si512(ph.cast()), _mm512_maskz_permutexvar_epi64(0x55, to, dh)));
            }
        }
        i += 8;
    }
}

/// The column sums as the product's 52-bit digits, into `lo`: column c's
/// total (its low halves and the high halves of column c - 1, below 2^61)
/// keeps its low 52 bits and carries the rest (below 2^9) into column c + 1;
/// a digit that then reaches 2^52 carries 1 on, through any run of digits
/// of 2^52 - 1 above it. Eight columns a vector: the lanes that make a
/// carry (G) and those that pass one on (P) are bit masks, and the lanes a
/// carry reaches are S | ((S + P) ^ S ^ P) with S = G << 1 | the carry from
/// the vector below, as in a binary addition; bit 8 of S + P carries to the
/// next vector.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn normalise(lo: *mut u64, hi: *const u64, columns: usize) {
    let mut carries = Carries::new();
    let mut c = 0;
    while c < columns {
        // SAFETY: columns c .. c + 8 of both.
        unsafe {
            let digits = carries.next(_mm512_loadu_si512(lo.add(c).cast()), _mm512_loadu_si512(hi.add(c).cast()));
            _mm512_storeu_si512(lo.add(c).cast(), digits);
        }
        c += 8;
    }
    debug_assert_eq!(carries.carry, 0);
}

/// What [`normalise`] carries from one vector of eight columns to the
/// next: the high halves and the bits over 52 of the vector below, and
/// the carry out of its top digit.
#[cfg(target_arch = "x86_64")]
struct Carries {
    high_below: __m512i,
    over_below: __m512i,
    carry: u32,
}

#[cfg(target_arch = "x86_64")]
impl Carries {
    #[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
    fn new() -> Self {
        Carries { high_below: _mm512_setzero_si512(), over_below: _mm512_setzero_si512(), carry: 0 }
    }

    /// The digits of the next eight columns, from their sums of low
    /// halves `lo` and of high halves `hi`.
    #[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
    #[inline]
    fn next(&mut self, lo: __m512i, hi: __m512i) -> __m512i {
        let m52 = _mm512_set1_epi64(M52 as i64);
        let total = _mm512_add_epi64(lo, _mm512_alignr_epi64(hi, self.high_below, 7));
        let over = _mm512_srli_epi64(total, 52);
        let t = _mm512_add_epi64(_mm512_and_si512(total, m52), _mm512_alignr_epi64(over, self.over_below, 7));
        let r = _mm512_and_si512(t, m52);
        let g = u32::from(_mm512_cmpgt_epu64_mask(t, m52));
        let p = u32::from(_mm512_cmpeq_epu64_mask(r, m52));
        let s = (g << 1) | self.carry;
        let x = s + p;
        let reached = (s | (x ^ s ^ p)) as __mmask8;
        self.carry = (x >> 8) & 1;
        self.high_below = hi;
        self.over_below = over;
        _mm512_and_si512(_mm512_mask_add_epi64(r, reached, r, _mm512_set1_epi64(1)), m52)
    }
}

/// Where each limb of a vector of eight finds its digits: 512 limb bits
/// are 9.85 digits, and the pattern repeats every 13 vectors. Entry `r`
/// gives, for vectors v with v % 13 == r, the first digit (relative to
/// `512 v / 52`) and the bit in it at which each limb starts.
const PACK: [([i64; 8], [i64; 8]); 13] = {
    let mut t = [([0i64; 8], [0i64; 8]); 13];
    let mut r = 0;
    while r < 13 {
        let offset = 512 * r - 52 * ((512 * r) / 52);
        let mut lane = 0;
        while lane < 8 {
            let bit = offset + 64 * lane;
            t[r].0[lane] = (bit / 52) as i64;
            t[r].1[lane] = (bit % 52) as i64;
            lane += 1;
        }
        r += 1;
    }
    t
};

/// `{dst, n}` = the number whose 52-bit digits (each below 2^52) are `src`,
/// which holds zeros for 16 digits beyond the last that `n` limbs cover.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512ifma,avx512vbmi2")]
unsafe fn pack(dst: *mut mp_limb_t, n: usize, src: *const u64) {
    let one = _mm512_set1_epi64(1);
    let two = _mm512_set1_epi64(2);
    let fifty_two = _mm512_set1_epi64(52);
    let hundred_four = _mm512_set1_epi64(104);
    let mut v = 0;
    while 8 * v < n {
        let first = (512 * v) / 52;
        let (at, shift) = &PACK[v % 13];
        // SAFETY: sixteen digits from `first`, within src's zeros; the
        // store is masked to the n limbs.
        unsafe {
            let (at, shift) = (_mm512_loadu_si512(at.as_ptr().cast()), _mm512_loadu_si512(shift.as_ptr().cast()));
            let (w0, w1) = (_mm512_loadu_si512(src.add(first).cast()), _mm512_loadu_si512(src.add(first + 8).cast()));
            let d0 = _mm512_permutex2var_epi64(w0, at, w1);
            let d1 = _mm512_permutex2var_epi64(w0, _mm512_add_epi64(at, one), w1);
            let d2 = _mm512_permutex2var_epi64(w0, _mm512_add_epi64(at, two), w1);
            // Shifts of 64 and more give zero: a limb takes three digits
            // only where it starts late in the first.
            let limb = _mm512_or_si512(
                _mm512_or_si512(_mm512_srlv_epi64(d0, shift), _mm512_sllv_epi64(d1, _mm512_sub_epi64(fifty_two, shift))),
                _mm512_sllv_epi64(d2, _mm512_sub_epi64(hundred_four, shift)),
            );
            let left = (n - 8 * v).min(8);
            _mm512_mask_storeu_epi64(dst.add(8 * v).cast(), ((1u32 << left) - 1) as __mmask8, limb);
        }
        v += 1;
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// The product by GMP's single-limb loop, which the kernel never
    /// replaces: an independent reference.
    fn by_rows(u: &[u64], v: &[u64]) -> Vec<u64> {
        let mut r = vec![0; u.len() + v.len()];
        for (j, &vj) in v.iter().enumerate() {
            // SAFETY: r has room for u.len() + 1 limbs from j.
            let cy = unsafe { embedded::mpn_addmul_1(r.as_mut_ptr().add(j), u.as_ptr(), u.len() as mp_size_t, vj) };
            r[j + u.len()] = cy;
        }
        r
    }

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Whether this processor lacks what the kernels need (the tests then
    /// say they skipped).
    fn lacks_the_instructions() -> bool {
        if !available() {
            eprintln!("skipped: this processor lacks AVX-512 IFMA or VBMI2");
        }
        !available()
    }

    /// A limb of operands of four kinds: random, all ones, sparse, and
    /// mostly ones (long runs of full digits for the carries to cross).
    fn limb(pattern: u32, s: &mut u64) -> u64 {
        match pattern {
            0 => xorshift(s),
            1 => u64::MAX,
            2 => xorshift(s) & 0x8000_0000_0000_0001,
            _ => !(xorshift(s) & xorshift(s) & xorshift(s) & xorshift(s)),
        }
    }

    #[test]
    fn kernel_matches_gmp_at_every_shape() {
        if lacks_the_instructions() {
            return;
        }
        let mut s = 0x1234_5678_9abc_def1;
        let mut checked = 0;
        for vn in 1..=V_MAX {
            for un in [vn, vn + 1, vn + 7, 2 * vn + 3, PIECE - 1, PIECE, PIECE + 1, 3 * PIECE + 5, 1000] {
                if un < vn {
                    continue;
                }
                for pattern in 0..4 {
                    let u: Vec<u64> = (0..un).map(|_| limb(pattern, &mut s)).collect();
                    let v: Vec<u64> = (0..vn).map(|_| limb(pattern, &mut s)).collect();
                    let mut r = vec![0xdead; un + vn];
                    // SAFETY: sizes as the kernel takes them.
                    unsafe { mul(r.as_mut_ptr(), u.as_ptr(), un, v.as_ptr(), vn) };
                    assert_eq!(r, by_rows(&u, &v), "{un} x {vn} limbs, pattern {pattern}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 3000);
    }

    /// The shapes the window takes, so that the test above reaches both
    /// ways of making the columns.
    #[test]
    fn window_takes_balanced_shapes_up_to_its_registers() {
        assert_eq!(window_vectors(40, 40), Some(6));
        assert_eq!(window_vectors(digits(256), digits(78)), Some(WINDOW_MAX));
        assert_eq!(window_vectors(digits(256), digits(79)), None);
        // A short operand of a few digits: the passes' triangles are small.
        assert_eq!(window_vectors(digits(100), digits(10)), None);
    }

    #[test]
    fn square_kernel_matches_gmp() {
        if lacks_the_instructions() {
            return;
        }
        let mut s = 0x0fed_cba9_8765_4321;
        for n in 1..=V_MAX {
            for pattern in 0..4 {
                let u: Vec<u64> = (0..n).map(|_| limb(pattern, &mut s)).collect();
                let mut r = vec![0xdead; 2 * n];
                // SAFETY: n limbs, 2n of room.
                unsafe { sqr(r.as_mut_ptr(), u.as_ptr(), n) };
                assert_eq!(r, by_rows(&u, &u), "{n} limbs squared, pattern {pattern}");
            }
        }
    }
}
