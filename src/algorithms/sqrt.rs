//! Square roots of large numbers (GMP's `mpn_sqrtrem`, which `mpz_sqrt`,
//! `mpz_sqrtrem`, `mpz_root` and `mpz_rootrem` for k = 2 and
//! `mpz_perfect_square_p` reach) by Newton's iteration, its products through
//! src/algorithms/product.rs (on the GPU where GMP's internal products go
//! there).
//!
//! GMP's root is divide and conquer (its dc_sqrtrem and dc_sqrt): the root
//! of the top half, then a division of the remainder by twice that root,
//! and the same again inside, one division per level, each of them GMP's
//! (an inverse by Newton's method and its products, through the hooks).
//! Most of that time is host work between small GPU products: a root of
//! 2 x 10^6 limbs took 48 to 68 ms on an H200 (RESULTS.md, "Square
//! roots"). Here the inverse square root x ~ 2^h / sqrt(N) comes from
//! Newton's iteration x' = x + x (1 - a x^2) / 2 (a = N / 2^(2h)), which
//! doubles the precision with three products and no division, taken to a
//! little over half the root's precision; then y ~ N x / 2^h to that
//! precision and one correction, sqrt(N) ~ y + x (N - y^2) / 2^(h+1)
//! (Karp and Markstein), give the whole root from products of half its
//! size, and its remainder is one square more. Where the root's products
//! go to the GPU (N from ON_DEVICE_FROM limbs), its large steps run on
//! device-resident numbers (src/gpu/root.rs, at the positions worked out
//! here): N goes up once, the root and its remainder's low limbs come down
//! once, 3x faster than with host products from 10^6 limbs of root
//! (RESULTS.md, "Square roots").
//!
//! Exact by construction: the estimate T is taken only when
//! 0 <= N - T^2 <= 2T, which makes it floor(sqrt(N)) (then (T + 1)^2 =
//! T^2 + 2T + 1 > N); the error bounds below keep T within one of the root,
//! so one correction at most is needed. They decide only the speed: were T
//! ever further off (a bug), GMP's own routine computes the root instead.

use super::product::own_product;
use super::route::{gmp_allocates_by_default, route_at};
use crate::config::{self, log};
use crate::gmp::mpz::{view, Int};
use crate::gmp::{self, embedded, mp_bitcnt_t, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use crate::cpu::{self, Linear};
use crate::gpu::root::{NewtonStep, RootPlan};
use crate::gpu::Gpu;
use crate::parallel;
use crate::stats::{self, Op};
use libc::c_int;
use std::sync::Mutex;

/// The iteration starts from an inverse square root of this many bits,
/// computed by GMP (a division and a square root of numbers of about
/// 4 BASE_BITS bits).
const BASE_BITS: u64 = 1024;
/// Bits a Newton step gives up against doubling (x of k bits gives 2k -
/// LOSS): with 6, each step's error stays within 3 units of its last place
/// (`step`).
pub(crate) const LOSS: u64 = 6;
/// Bits beyond half the root's to which Newton's iteration takes the
/// inverse root before the one correction that gives the root itself
/// (`root_moved_by`): its error terms are then below 2^-30.
const MARGIN: u64 = 40;
/// Fewest limbs this method takes: below, GMP's own routine is cheap, and
/// the bounds below assume h (half N's bits) well above LOSS.
pub(crate) const MIN_LIMBS: usize = 16;
/// N's limbs from which the root's large work runs on device-resident
/// numbers (src/gpu/root.rs), where its products go to the GPU.
const ON_DEVICE_FROM: usize = 1 << 13;
/// The iterate's limbs from which its Newton steps run there: smaller
/// steps are a few launches' worth of work, cheaper as GMP's on the host.
const DEVICE_STEPS_FROM: u64 = 1 << 10;

// cuGMP's owned integer (src/gmp/mpz.rs) with the operations the
// iteration needs.
impl Int {
    fn from_u64(v: u64) -> Int {
        let mut z = Int::new();
        // SAFETY: z is initialised.
        unsafe { embedded::mpz_set_ui(z.m(), v as libc::c_ulong) };
        z
    }

    /// 2^e.
    fn power_of_two(e: u64) -> Int {
        Int::from_u64(1).shifted(e as i64)
    }

    /// self * 2^by (by >= 0), or floor(self / 2^-by).
    fn shifted(&self, by: i64) -> Int {
        shifted(self.p(), by)
    }

    fn add_assign(&mut self, other: mpz_srcptr) {
        let me = self.m();
        // SAFETY: in place, as GMP allows.
        unsafe { embedded::mpz_add(me, me, other) };
    }

    fn add_small(&mut self, v: i64) {
        let me = self.m();
        // SAFETY: in place, as GMP allows.
        unsafe {
            if v >= 0 {
                embedded::mpz_add_ui(me, me, v as libc::c_ulong);
            } else {
                embedded::mpz_sub_ui(me, me, v.unsigned_abs() as libc::c_ulong);
            }
        }
    }

    /// self = src * 2^by (by >= 0), or floor(src / 2^-by) (toward minus
    /// infinity, as GMP's fdiv), on the host's cores where large
    /// (`cpu::shift_into`); one thread's GMP shift moves a few GB/s.
    fn set_shifted(&mut self, src: &Int, by: i64) {
        let from = src.limbs();
        let negative = src.sign() < 0;
        let (whole, bits) = ((by.unsigned_abs() / 64) as usize, by.unsigned_abs() % 64);
        let len = if by >= 0 { from.len() + whole + 1 } else { from.len().saturating_sub(whole) };
        self.0._mp_size = 0;
        // One limb more for a negative quotient's carry.
        self.reserve(len + 1);
        // SAFETY: the room holds len + 1 limbs; src is another Int.
        let room = unsafe { std::slice::from_raw_parts_mut(self.0._mp_d, len + 1) };
        cpu::shift_into(&mut room[..len], from, by);
        room[len] = 0;
        if negative && by < 0 {
            // floor(-a / 2^s) = -ceil(a / 2^s): one more where bits fell off.
            let partial = from.get(whole).is_some_and(|&l| bits > 0 && l & ((1 << bits) - 1) != 0);
            if partial || from[..whole.min(from.len())].iter().any(|&l| l != 0) {
                cpu::carry_on(room, 1);
            }
        }
        self.set_written(len + 1, negative);
    }

    /// self = 2 t + 1 (t >= 0, another Int).
    fn set_double_plus_one(&mut self, t: &Int) {
        self.set_shifted(t, 1);
        // SAFETY: set_shifted left a room of at least one limb; the bit
        // set is a zero one.
        unsafe { *self.0._mp_d |= 1 };
        if self.0._mp_size == 0 {
            self.0._mp_size = 1;
        }
    }

    /// self += c for self > 0 longer than c (so |c| < self), on the
    /// host's cores where large (`cpu::linear_into`); other cases by GMP.
    fn add_shorter(&mut self, c: &Int) {
        let (xn, cn) = (self.limbs().len(), c.limbs().len());
        if self.sign() <= 0 || cn >= xn {
            return self.add_assign(c.p());
        }
        self.reserve(xn + 1);
        // SAFETY: the room holds xn + 1 limbs; c is another Int.
        let room = unsafe { std::slice::from_raw_parts_mut(self.0._mp_d, xn + 1) };
        room[xn] = 0;
        if c.sign() >= 0 {
            cpu::linear_into(room, c.limbs(), Linear::Add);
        } else {
            // |c| < B^cn <= B^(xn-1) <= self: no borrow out.
            cpu::linear_into(&mut room[..xn], c.limbs(), Linear::Sub);
        }
        self.set_written(xn + 1, false);
    }

    /// self = |self| - |other|, signed, for |self| with at least as many
    /// limbs as |other|, on the host's cores where large.
    fn sub_magnitude(&mut self, other: &Int) {
        let n = self.limbs().len();
        debug_assert!(other.limbs().len() <= n);
        // SAFETY: self's n limbs in use; other is another Int.
        let room = unsafe { std::slice::from_raw_parts_mut(self.0._mp_d, n) };
        let below = cpu::linear_into(room, other.limbs(), Linear::Sub) != 0;
        if below {
            cpu::negate(room);
        }
        self.set_written(n, below);
    }

    /// Room for `limbs` limbs without reallocation, its pages touched on
    /// several threads: a fresh buffer's first writes otherwise fault in
    /// its pages one at a time inside the GPU's download, which took 2 to
    /// 4 ms instead of under 1 for the products of 2 x 10^6 limbs (the
    /// device log; RESULTS.md, "Square roots"). The value is kept.
    /// Room that is there already is not touched again: a kept
    /// temporary's pages (`Temporaries`) are in memory.
    fn reserve(&mut self, limbs: usize) {
        if self.0._mp_alloc as usize >= limbs {
            return;
        }
        // SAFETY: growing keeps the value; then `limbs` limbs are ours.
        unsafe { embedded::mpz_realloc(self.m(), limbs as mp_size_t) };
        let used = self.0._mp_size.unsigned_abs() as usize;
        let alloc = self.0._mp_alloc as usize;
        // SAFETY: [used, alloc) is allocated and holds no value.
        let spare = unsafe { std::slice::from_raw_parts_mut(self.0._mp_d.add(used), alloc - used) };
        const PAGE_LIMBS: usize = 512;
        const RUN: usize = 1 << 16;
        let threads = parallel::cores().min(16).min(spare.len() / RUN + 1);
        parallel::each_item(spare, RUN, threads, |_, run| run.iter_mut().step_by(PAGE_LIMBS).for_each(|l| *l = 0));
    }

    /// The value is the first `written` limbs of the room (high zeros
    /// allowed: they are dropped), with that sign.
    fn set_written(&mut self, written: usize, negative: bool) {
        // SAFETY: the room holds at least `written` limbs, just written.
        let room = unsafe { std::slice::from_raw_parts(self.0._mp_d, written) };
        let used = (written - room.iter().rev().take_while(|&&l| l == 0).count()) as c_int;
        self.0._mp_size = if negative { -used } else { used };
    }
}

/// e = -(bits [from, from + count) of |x|), the window read as a
/// count-bit two's complement number (so in (-2^(count-1), 2^(count-1)]);
/// e's room is reused.
fn negated_window_into(e: &mut Int, x: &Int, from: u64, count: u64) {
    let limbs = x.limbs();
    let (start, sh) = ((from / 64) as usize, (from % 64) as u32);
    let width = count.div_ceil(64) as usize;
    let limb = |i: usize| limbs.get(i).copied().unwrap_or(0);
    if (e.0._mp_alloc as usize) < width {
        e.0._mp_size = 0;
        e.reserve(width);
    }
    // SAFETY: e holds `width` limbs.
    let w = unsafe { std::slice::from_raw_parts_mut(e.0._mp_d, width) };
    for (i, out) in w.iter_mut().enumerate() {
        *out = if sh == 0 { limb(start + i) } else { (limb(start + i) >> sh) | (limb(start + i + 1) << (64 - sh)) };
    }
    let top_bits = count - 64 * (width as u64 - 1);
    let mask = if top_bits == 64 { mp_limb_t::MAX } else { (1 << top_bits) - 1 };
    w[width - 1] &= mask;
    // The window w >= 2^(count-1) reads as w - 2^count < 0, so e =
    // 2^count - w > 0: the count-bit two's complement of w; else e = -w.
    let positive = w[width - 1] >> (top_bits - 1) & 1 == 1;
    if positive {
        // 2^count - w = (!w + 1) within count bits (w != 0 here).
        let mut carry = true;
        for l in w.iter_mut() {
            let (v, c) = (!*l).overflowing_add(mp_limb_t::from(carry));
            *l = v;
            carry = c;
        }
        w[width - 1] &= mask;
    }
    e.set_written(width, !positive);
}

/// r against 2t, for r >= 0 and t > 0, without forming 2t.
fn cmp_with_double(r: &Int, t: &Int) -> std::cmp::Ordering {
    let (r, t) = (r.limbs(), t.limbs());
    let double = |i: usize| {
        let low = if i > 0 { t.get(i - 1).map_or(0, |l| l >> 63) } else { 0 };
        t.get(i).map_or(0, |l| l << 1) | low
    };
    (0..r.len().max(t.len() + 1))
        .rev()
        .map(|i| r.get(i).copied().unwrap_or(0).cmp(&double(i)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// Significant bits of |x| (0 for zero).
fn bit_length(x: mpz_srcptr) -> u64 {
    // SAFETY: x is an initialised mpz_t; its top limb is nonzero.
    let limbs = unsafe { gmp::limbs(x) };
    match limbs.last() {
        None => 0,
        Some(&top) => limbs.len() as u64 * 64 - u64::from(top.leading_zeros()),
    }
}

/// x * 2^by (by >= 0), or floor(x / 2^-by).
fn shifted(x: mpz_srcptr, by: i64) -> Int {
    let mut r = Int::new();
    shift_into(r.m(), x, by);
    r
}

/// r = x * 2^by (by >= 0), or floor(x / 2^-by); r may be x.
fn shift_into(r: mpz_ptr, x: mpz_srcptr, by: i64) {
    // SAFETY: both initialised; GMP allows r == x.
    unsafe {
        if by >= 0 {
            embedded::mpz_mul_2exp(r, x, by as mp_bitcnt_t);
        } else {
            embedded::mpz_fdiv_q_2exp(r, x, by.unsigned_abs() as mp_bitcnt_t);
        }
    }
}

thread_local! {
    /// Time this thread spent in `product` (CUGMP_LOG's account of a root).
    static PRODUCT_TIME: std::cell::Cell<std::time::Duration> = const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

/// r = a * b through `own_product` (the same operand twice
/// squares); r is neither a nor b, and its room is reused.
fn product_into(r: &mut Int, a: mpz_srcptr, b: mpz_srcptr) {
    let start = std::time::Instant::now();
    product_untimed(r, a, b);
    PRODUCT_TIME.with(|t| t.set(t.get() + start.elapsed()));
}

fn product_untimed(r: &mut Int, a: mpz_srcptr, b: mpz_srcptr) {
    // SAFETY: both initialised (Ints or views).
    let (la, lb) = unsafe { (gmp::limbs(a), gmp::limbs(b)) };
    r.0._mp_size = 0;
    if la.is_empty() || lb.is_empty() {
        return;
    }
    let n = la.len() + lb.len();
    if (r.0._mp_alloc as usize) < n {
        r.reserve(n);
    }
    // SAFETY: r holds n limbs, which the product writes in full, apart from
    // a and b (r is neither).
    unsafe {
        let out = std::slice::from_raw_parts_mut(r.0._mp_d, n);
        own_product(out, la, lb, "square root's product");
        r.set_written(n, (gmp::negative(a)) != (gmp::negative(b)));
    }
}

/// A root's large temporaries: the iterate X, the products' rooms (P, then
/// C, then the root T; A P, then y's square, D' and the remainder R) and E
/// (then y).
struct Temporaries {
    x: Int,
    p: Int,
    ap: Int,
    e: Int,
}

/// The temporaries of the last root, kept for the next one (one set for the
/// process, at most SPARE_BYTES). A fresh set's pages are faulted in on
/// every root, and freeing them unmaps them again: roots of 10^6 limbs one
/// after another ran 1.2x faster with the set kept (RESULTS.md, "Square
/// roots").
static SPARE: Mutex<Option<Temporaries>> = Mutex::new(None);
/// The largest set kept.
const SPARE_BYTES: usize = 512 << 20;

impl Temporaries {
    /// The kept set, where GMP's own memory functions still allocate (the
    /// set came from them); else a fresh one, the kept set freed by the
    /// functions that allocated it.
    fn take() -> Temporaries {
        let kept = SPARE.lock().ok().and_then(|mut slot| slot.take());
        match kept {
            Some(t) if gmp_allocates_by_default() => t,
            Some(t) => {
                t.free_by_default();
                Temporaries::new()
            }
            None => Temporaries::new(),
        }
    }

    fn new() -> Temporaries {
        Temporaries { x: Int::new(), p: Int::new(), ap: Int::new(), e: Int::new() }
    }

    /// Keep this set for the next root if it came from GMP's own memory
    /// functions and is not too large; else drop it.
    fn give_back(self) {
        let bytes: usize = [&self.x, &self.p, &self.ap, &self.e].iter().map(|z| z.0._mp_alloc as usize * 8).sum();
        if bytes > SPARE_BYTES || !gmp_allocates_by_default() {
            return;
        }
        if let Ok(mut slot) = SPARE.lock() {
            if slot.is_none() {
                *slot = Some(self);
            }
        }
    }

    /// Free the limbs by cuGMP's default function (src/gmp/memory.rs),
    /// which allocated them (a pool block among them, maybe), whatever the
    /// program has set since.
    fn free_by_default(self) {
        for mut z in [self.x, self.p, self.ap, self.e] {
            let alloc = z.0._mp_alloc as usize;
            // SAFETY: the limbs came from GMP's default allocation (`take`
            // keeps only such sets); z is left a fresh, empty mpz_t that
            // its drop does not free.
            unsafe {
                if alloc != 0 {
                    crate::gmp::memory::free(z.0._mp_d.cast(), alloc * 8);
                }
                gmp::mpz::init(z.m());
            }
        }
    }
}

// SAFETY: the limbs are the Ints' own, reached through no other pointer;
// a set is kept (and so freed on another thread) only where GMP's default
// functions, malloc's, allocated it.
unsafe impl Send for Temporaries {}

/// A root and its remainder (`root_and_remainder`), in temporaries that go
/// back to be kept when it drops.
pub(crate) struct Root(Temporaries);

impl Root {
    /// floor(sqrt(N)): ceil(nn / 2) limbs.
    pub(crate) fn root(&self) -> &[mp_limb_t] {
        self.0.p.limbs()
    }

    /// N - root^2, normalised (empty for a perfect square).
    pub(crate) fn remainder(&self) -> &[mp_limb_t] {
        self.0.ap.limbs()
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        std::mem::replace(&mut self.0, Temporaries::new()).give_back();
    }
}

/// floor(sqrt(N)) and N - floor(sqrt(N))^2 for N = `n` (top limb nonzero,
/// at least MIN_LIMBS limbs, fewer than 2^31): None if the estimate missed
/// by more than the bounds allow (never, by the bounds below; the caller
/// then asks GMP).
pub(crate) fn root_and_remainder(n: &[mp_limb_t]) -> Option<Root> {
    let start = std::time::Instant::now();
    PRODUCT_TIME.with(|t| t.set(std::time::Duration::ZERO));
    let root = root_moved_by(n, 0);
    log!(
        "mpn_sqrtrem {} limbs: {:.3} ms, {:.3} of them in products",
        n.len(),
        start.elapsed().as_secs_f64() * 1e3,
        PRODUCT_TIME.with(|t| t.get()).as_secs_f64() * 1e3
    );
    root
}

/// `root_and_remainder` with the estimate moved by `nudge` before its
/// correction (the tests' planted error; 0 otherwise).
fn root_moved_by(n: &[mp_limb_t], nudge: i64) -> Option<Root> {
    if n.len() < MIN_LIMBS || c_int::try_from(n.len()).is_err() || n.last().is_none_or(|&top| top == 0) {
        return None;
    }
    let whole = view(n);
    let big_n: mpz_srcptr = &whole;
    let bits = bit_length(big_n);
    // a = N / 2^(2h) is in [1/4, 1); x* = 1/sqrt(a) = 2^h / sqrt(N) in (1, 2].
    let h = bits.div_ceil(2);
    // Newton's iteration stops at k bits, a little over half the root's,
    // with h - k a multiple of 32 (so that N / 2^(2w) below is whole
    // limbs, w = h - k); the rest is one correction (Karp and Markstein).
    let mut k = h.div_ceil(2) + MARGIN;
    k += (h - k) % 32;
    let w = h - k;
    let precisions = precisions(k);
    // Every large temporary, allocated once at its largest (`reserve`) or
    // kept from the last root: x, the products (at most N's limbs and a
    // few: A P, N's top times X, T^2 and below them), and E and y (a
    // quarter of N).
    let mut temps = Temporaries::take();
    base_inverse_root_into(&mut temps.x, big_n, bits, h, precisions[0]);
    // The device, where it takes this root: the steps from its first
    // precision on, and everything after them.
    let device = if n.len() >= ON_DEVICE_FROM && nudge == 0 { route_at(Op::Internal, n.len() / 4, true) } else { None };
    let last = precisions.len() - 1;
    let first_on_device = device.map_or(last, |_| precisions.iter().position(|&p| p >= 64 * DEVICE_STEPS_FROM).unwrap_or(last));
    // x trades rooms with the products' (`step`): all of N's size (half
    // of it where the host makes only the first steps, and T and R come
    // from the device).
    let rooms = if device.is_some() { n.len() / 2 + 8 } else { n.len() + 8 };
    temps.x.reserve(rooms);
    temps.p.reserve(rooms);
    temps.ap.reserve(rooms);
    temps.e.reserve(n.len() / 4 + 4);
    let positions = Positions::new(h, k, w);
    {
        let Temporaries { x, p, ap, e } = &mut temps;
        for pair in precisions[..=first_on_device].windows(2) {
            step(n, h, x, pair[0], pair[1], &mut (&mut *p, &mut *ap, &mut *e));
        }
    }
    if let Some(g) = device {
        let steps: Vec<NewtonStep> = precisions[first_on_device..].windows(2).map(|pair| step_at(h, pair[0], pair[1])).collect();
        if root_on_device(g, n, &positions, &steps, &mut temps) {
            return corrected(temps, n);
        }
        // The host goes on from the device's first step: x is as it was.
        temps.x.reserve(n.len() + 8);
        temps.p.reserve(n.len() + 8);
        temps.ap.reserve(n.len() + 8);
    }
    {
        let Temporaries { x, p, ap, e } = &mut temps;
        for pair in precisions[first_on_device..].windows(2) {
            step(n, h, x, pair[0], pair[1], &mut (&mut *p, &mut *ap, &mut *e));
        }
        let (t, r, y) = (p, ap, e);
        // s = sqrt(N) (real) = N x* / 2^h, and N X_k / 2^(h+k) = s (1 +
        // eta), |eta| <= 3 * 2^-k for X_k = 2^k x* + e, |e| <= 3: within
        // 3 * 2^w of s. y = floor(N_top X_k / 2^(h+k+w-z)), N_top = N's
        // bits from z = 64 floor((h + w - 4) / 64) up (whole limbs: a
        // view), gives Y = y 2^w within 3 * 2^w + 2^(w-3) + 2^w < 2^(w+3)
        // of s: N's bits below z change N X_k / 2^(h+k) by at most
        // 2^(z+1-h) <= 2^(w-3).
        let top = view(&n[positions.top_from..]);
        product_into(r, &top, x.p());
        y.set_shifted(r, -(positions.y_shift as i64));
        // D = N - Y^2 = (s - Y)(s + Y), below 2^(h+w+4) in size; Y^2 is a
        // multiple of 2^(2w), so D' = floor(D / 2^(2w)) = N_high - y^2
        // exactly (N_high = N / 2^(2w), whole limbs), below 2^(k+4) in
        // size: the low limbs' difference (`remainder_in_place`).
        product_into(r, y.p(), y.p());
        remainder_in_place(r, &n[positions.high_from..], y.limbs().len());
        // s = Y + D / (s + Y), and D / (s + Y) = D x* / 2^(h+1) + D (s -
        // Y) / (2s (s + Y)): the second term is below 2^(h+w+4) 2^(w+3) /
        // 2^(2h-1) = 2^(h-2k+8), and X_k's error and D's dropped low bits
        // change the first by at most 3 * 2^(h-2k+3) and 2^(h-2k), all
        // below 2^-30 for k >= h/2 + MARGIN. So C = floor(D' X_k /
        // 2^(3k-h+1)) makes T = Y + C within one of s from below, a hair
        // above: floor(s) - 1, floor(s) or floor(s) + 1.
        product_into(t, r.p(), x.p());
        r.set_shifted(t, -(positions.c_shift as i64));
        t.set_shifted(y, w as i64);
        t.add_shorter(r);
        if nudge != 0 {
            t.add_small(nudge);
        }
        product_into(r, t.p(), t.p());
        remainder_in_place(r, n, t.limbs().len());
    }
    corrected(temps, n)
}

/// Where the root's last products read and shift (`root_moved_by`).
struct Positions {
    /// N_top = N's limbs from this one (z / 64), and y = floor(N_top X_k /
    /// 2^y_shift).
    top_from: usize,
    y_shift: u64,
    /// N_high = N's limbs from this one (2w / 64).
    high_from: usize,
    /// C = floor(D' X_k / 2^c_shift).
    c_shift: u64,
    /// |D'| < 2^(k+4): below 2^(64 d_limbs - 1).
    d_limbs: usize,
    w: u64,
}

impl Positions {
    fn new(h: u64, k: u64, w: u64) -> Positions {
        let z = (h + w - 4) / 64 * 64;
        Positions { top_from: (z / 64) as usize, y_shift: h + k + w - z, high_from: (2 * w / 64) as usize, c_shift: 3 * k - h + 1, d_limbs: (k + 4) as usize / 64 + 2, w }
    }
}

/// The root's `steps` and everything after them on `g`'s device-resident
/// numbers (src/gpu/root.rs), from X = temps.x: T into temps.p and N - T^2
/// into temps.ap; false (temps.x untouched) if the device failed.
fn root_on_device(g: &Gpu, n: &[mp_limb_t], at: &Positions, steps: &[NewtonStep], temps: &mut Temporaries) -> bool {
    let root_limbs = n.len().div_ceil(2);
    let plan = RootPlan {
        n,
        x: temps.x.limbs(),
        steps,
        top_from: at.top_from,
        y_shift: at.y_shift,
        high_from: at.high_from,
        d_limbs: at.d_limbs,
        w: at.w,
        c_shift: at.c_shift,
        root_limbs,
    };
    let (t, r) = (&mut temps.p, &mut temps.ap);
    t.0._mp_size = 0;
    r.0._mp_size = 0;
    t.reserve(root_limbs + 1);
    r.reserve(root_limbs + 2);
    // SAFETY: the rooms hold those limbs; neither is x, which the plan reads.
    let (t_room, r_room) = unsafe { (std::slice::from_raw_parts_mut(t.0._mp_d, root_limbs + 1), std::slice::from_raw_parts_mut(r.0._mp_d, root_limbs + 2)) };
    stats::gpu_attempt_starts();
    let start = std::time::Instant::now();
    let found = match g.root(&plan, t_room, r_room) {
        Ok(found) => found,
        Err(e) => {
            stats::fallback(Op::Sqrt, e.fallback());
            log!("mpn_sqrtrem {} limbs: GPU failed ({e}); finishing on the CPU", n.len());
            return false;
        }
    };
    stats::gpu_call(Op::Sqrt, n.len(), start.elapsed());
    log!("mpn_sqrtrem {} limbs: the root from device-resident numbers, {} Newton steps there, {:.3} ms", n.len(), steps.len(), start.elapsed().as_secs_f64() * 1e3);
    t.set_written(root_limbs + 1, false);
    // N - T^2 is the low limbs, top bit flipped, read as two's complement
    // where the device found it small enough (src/gpu/root.rs,
    // `low_difference`); else GMP's whole subtraction.
    if found.fits {
        r_room[root_limbs + 1] ^= 1 << 63;
        let negative = r_room[root_limbs + 1] >> 63 == 1;
        if negative {
            cpu::negate(r_room);
        }
        r.set_written(root_limbs + 2, negative);
    } else {
        log!("mpn_sqrtrem {} limbs: the device's remainder is past its low limbs; N - T^2 on the host", n.len());
        product_into(r, t.p(), t.p());
        remainder_in_place(r, n, t.limbs().len());
    }
    if config::get().check {
        // The device's products were not checked one by one: N = T^2 + R
        // on the CPU.
        let mut back = Int::new();
        // SAFETY: all initialised; N is a view GMP only reads.
        let same = unsafe {
            embedded::mpz_mul(back.m(), t.p(), t.p());
            embedded::mpz_add(back.m(), back.p(), r.p());
            embedded::mpz_cmp(back.p(), &view(n)) == 0
        };
        if !same {
            eprintln!("cugmp: CUGMP_CHECK: the GPU's square root of {} limbs and its remainder differ from N; aborting", n.len());
            std::process::abort();
        }
    }
    true
}

/// T (temps.p) and R = N - T^2 (temps.ap) with T within one of the root:
/// T moved by one while R says so (x's room, free now, holds 2T + 1 or
/// 2(T - 1) + 1), then the root and its remainder if 0 <= R <= 2T and T
/// has ceil(nn / 2) limbs, else None.
fn corrected(mut temps: Temporaries, n: &[mp_limb_t]) -> Option<Root> {
    let Temporaries { x, p: t, ap: r, .. } = &mut temps;
    for _ in 0..2 {
        if r.sign() < 0 {
            // (T - 1)^2 = T^2 - (2(T - 1) + 1): R' = 2(T - 1) + 1 - |R|.
            t.add_small(-1);
            x.set_double_plus_one(t);
            if x.limbs().len() >= r.limbs().len() {
                x.sub_magnitude(r);
                std::mem::swap(x, r);
            } else {
                r.add_assign(x.p());
            }
        } else if cmp_with_double(r, t).is_gt() {
            // (T + 1)^2 = T^2 + 2T + 1; R > 2T has at least 2T + 1's limbs.
            x.set_double_plus_one(t);
            r.sub_magnitude(x);
            t.add_small(1);
        }
    }
    let exact = r.sign() >= 0 && cmp_with_double(r, t).is_le() && t.limbs().len() == n.len().div_ceil(2);
    // Not exact: the temporaries go back all the same (Root's drop).
    let found = Root(temps);
    exact.then_some(found)
}

/// r = N - r for r = T^2, T within 4 of N's root s (within one, by the
/// bounds; the tests plant up to 4). Then |N - T^2| <= 2s + 8s + 16 <
/// B^(m-1) for m = T's limbs + 2, so N - T^2 is the low m
/// limbs' difference modulo B^m read as an m-limb two's complement number,
/// provided the limbs above m differ by what that reading says (compared,
/// not subtracted): half the subtraction GMP would make, on the host's
/// cores where large. Anything else (sizes that differ, a difference
/// carried past limb m) is GMP's whole subtraction.
fn remainder_in_place(r: &mut Int, n: &[mp_limb_t], tn: usize) {
    let m = tn + 2;
    let sq = r.limbs().len();
    if sq == n.len() && m < sq && r.sign() > 0 {
        // SAFETY: r's sq limbs in use, apart from N.
        let room = unsafe { std::slice::from_raw_parts_mut(r.0._mp_d, sq) };
        let (low, high) = room.split_at_mut(m);
        let borrow = cpu::linear_into(low, &n[..m], Linear::SubFrom);
        let negative = low[m - 1] >> 63 == 1;
        // N - T^2 = (N_high - T^2_high) B^m + low - borrow B^m, which is
        // low read as two's complement when N_high - T^2_high = borrow -
        // negative; taken where that is 0.
        if borrow == mp_limb_t::from(negative) && cpu::limbs_equal(&n[m..], high) {
            if negative {
                cpu::negate(low);
            }
            r.set_written(m, negative);
            return;
        }
        // Back to T^2's low limbs: N_low - (N_low - T^2_low).
        cpu::linear_into(low, &n[..m], Linear::SubFrom);
    }
    let whole = view(n);
    // SAFETY: r in place, as GMP allows; N is a view GMP only reads.
    unsafe { embedded::mpz_sub(r.m(), &whole, r.p()) };
}

/// The Newton steps' precisions, smallest first: the last is `target`, the
/// first at most BASE_BITS, and each at most twice the one before less
/// LOSS.
pub(crate) fn precisions(target: u64) -> Vec<u64> {
    let mut ks = vec![target];
    while let Some(&k) = ks.last().filter(|&&k| k > BASE_BITS) {
        ks.push((k + LOSS).div_ceil(2));
    }
    ks.reverse();
    ks
}

/// x = X_k0 = 2^k0 x* = 2^(k0 + h) / sqrt(N) within 2, by GMP: with N_t = N's
/// top w = 2 k0 + 64 bits (N / 2^s, s even) and e = 2 (k0 + h) - s,
/// floor(2^e / N_t) exceeds (2^k0 x*)^2 < 2^(2 k0 + 2) by a factor of at
/// most 1 + 2^(1-w), so by at most 2^-61, and falls below it by less than
/// 1; its square root, floored, is within 2 of 2^k0 x*.
fn base_inverse_root_into(x: &mut Int, big_n: mpz_srcptr, bits: u64, h: u64, k0: u64) {
    let w = 2 * k0 + 64;
    let s = bits.saturating_sub(w) & !1;
    let top = shifted(big_n, -(s as i64));
    let mut q = Int::new();
    // SAFETY: all initialised; top is nonzero. These are numbers of a few
    // hundred limbs at most: GMP's own division and root (the root's hook
    // leaves them to GMP, below MIN_LIMBS or the threshold).
    unsafe {
        embedded::mpz_tdiv_q(q.m(), Int::power_of_two(2 * (k0 + h) - s).p(), top.p());
        embedded::mpz_sqrt(x.m(), q.p());
    }
}

/// One Newton step: X_k (2^k x* within 3) to X_K, K <= 2k - LOSS, in place.
///
/// With x = X_k / 2^k, x' = x + x (1 - a x^2) / 2 is x* (1 - 3/2 eta^2 -
/// 1/2 eta^3) for x = x* (1 + eta), |eta| <= 3 * 2^-k: an error of at most
/// 2^K * 2 * 1.6 * 9 * 2^-2k <= 0.45 units of 2^-K for K <= 2k - 6.
///
/// In integers: A = floor(a 2^q) for the first q >= K + 4 that makes 2h - q
/// a multiple of 64 (A is N's top limbs: a view, no copy), P = X_k^2, and
/// E = 2^(q+2k) - A P, which is 2^(q+2k) (1 - a x^2) plus at most
/// P < 2^(2k+2) (A's truncation). With d = q + 2k - K - 2, E' =
/// floor(E / 2^d) is below 2^(K-k+5) in size (|1 - a x^2| < 7 * 2^-k), so
/// E' is determined by its m = K - k + 8 low bits: 2^(q+2k-d) is 0 modulo
/// 2^m, and E'' = -(bits d to d + m of A P), read as m-bit two's
/// complement, is E' or E' + 1 (the floor of A P / 2^d against its
/// ceiling). Only those bits of A P are read: its top half is known to
/// cancel. `scratch` holds P (then C), A P and E. C = floor(X_k E'' / 2^(k+3)) is x (1 - a x^2) / 2 in units of
/// 2^-K with errors of at most 1/4 (A), 1/2 (E'') and 1 (C's floor); X_K =
/// X_k 2^(K-k) + C is within 0.45 + 1.75 < 3 of 2^K x*.
fn step(n: &[mp_limb_t], h: u64, x: &mut Int, k: u64, big_k: u64, (p, ap, e): &mut (&mut Int, &mut Int, &mut Int)) {
    let at = step_at(h, k, big_k);
    let a = view(&n[at.a_from..]);
    product_into(p, x.p(), x.p());
    product_into(ap, &a, p.p());
    negated_window_into(e, ap, at.d, at.m);
    let c = p;
    product_into(c, x.p(), e.p());
    // C / 2^(k+3), floored, into E's room (E is read no more); X_K =
    // X_k 2^(K-k) + that, made in C's room, whose room x then takes.
    e.set_shifted(c, -((k + 3) as i64));
    c.set_shifted(x, (big_k - k) as i64);
    c.add_shorter(e);
    std::mem::swap(x, *c);
}

/// Where the step from X_k to X_K reads (`step`'s A, d and m).
fn step_at(h: u64, k: u64, big_k: u64) -> NewtonStep {
    debug_assert!(big_k + LOSS <= 2 * k && big_k + 4 <= 2 * h);
    let dropped = (2 * h - big_k - 4) / 64;
    let q = 2 * h - 64 * dropped;
    NewtonStep { k, big_k, a_from: dropped as usize, d: q + 2 * k - big_k - 2, m: big_k - k + 8 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::random_limbs;

    /// GMP's own mpn_sqrtrem (the original, not the hook).
    fn gmp_root(n: &[mp_limb_t]) -> (Vec<mp_limb_t>, Vec<mp_limb_t>) {
        let mut s = vec![0; n.len().div_ceil(2)];
        let mut r = vec![0; n.len()];
        // SAFETY: s holds ceil(nn/2) limbs, r nn, apart from n.
        let rn = unsafe { embedded::mpn_sqrtrem(s.as_mut_ptr(), r.as_mut_ptr(), n.as_ptr(), n.len() as mp_size_t) };
        r.truncate(rn as usize);
        (s, r)
    }

    /// The tests here one at a time: they share the kept temporaries.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[test]
    fn roots_match_gmp() {
        let _one = serial();
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        let mut cases: Vec<Vec<mp_limb_t>> = Vec::new();
        // The last size's shifts, sums and remainder run on threads.
        for n in [16, 17, 31, 32, 33, 64, 100, 255, 256, 257, 1000, 2047, 4000, 9001, (1 << 21) + 3] {
            cases.push(random_limbs(n, &mut seed));
            // A small top limb: bit lengths of every parity.
            let mut small_top = random_limbs(n, &mut seed);
            small_top[n - 1] = 1 + (small_top[n - 1] >> (n % 63));
            cases.push(small_top);
            cases.push(vec![mp_limb_t::MAX; n]);
            let mut sparse = vec![0; n];
            sparse[n - 1] = 1;
            sparse[n / 3] = 5;
            cases.push(sparse);
        }
        // Perfect squares and their neighbours: the remainder 0, 2T and
        // just below zero are where a correction goes wrong.
        for n in [8, 9, 50, 600, 2500] {
            let root = random_limbs(n, &mut seed);
            let mut square = vec![0; 2 * n];
            // SAFETY: square holds 2n limbs apart from root.
            unsafe { embedded::mpn_mul(square.as_mut_ptr(), root.as_ptr(), n as mp_size_t, root.as_ptr(), n as mp_size_t) };
            while square.last() == Some(&0) {
                square.pop();
            }
            let mut minus_one = square.clone();
            // SAFETY: in place on minus_one's limbs (square > 0).
            unsafe { embedded::mpn_sub_1(minus_one.as_mut_ptr(), minus_one.as_ptr(), minus_one.len() as mp_size_t, 1) };
            while minus_one.last() == Some(&0) {
                minus_one.pop();
            }
            let mut plus_one = square.clone();
            plus_one.push(0);
            // SAFETY: in place on plus_one's limbs, one spare limb on top.
            unsafe { embedded::mpn_add_1(plus_one.as_mut_ptr(), plus_one.as_ptr(), plus_one.len() as mp_size_t, 1) };
            while plus_one.last() == Some(&0) {
                plus_one.pop();
            }
            cases.extend([square, minus_one, plus_one]);
        }
        for (i, n) in cases.iter().enumerate() {
            let got = root_and_remainder(n).map(|r| (r.root().to_vec(), r.remainder().to_vec()));
            assert!(got.is_some(), "case {i} ({} limbs): the estimate missed by more than one", n.len());
            assert!(got == Some(gmp_root(n)), "case {i} ({} limbs): root or remainder differs from GMP's", n.len());
        }
    }

    /// The remainder from the low limbs equals GMP's whole subtraction,
    /// where the low limbs decide it (small differences of both signs)
    /// and where they do not (a difference carried past them, sizes that
    /// differ, a difference as large as N), on one thread and several.
    #[test]
    fn remainders_match_gmp() {
        let _one = serial();
        let mut seed = 0xabcd_ef01;
        for tn in [9, 300, (1 << 19) + 5] {
            let t = random_limbs(tn, &mut seed);
            let mut square = Int::new();
            let tv = view(&t);
            // SAFETY: all initialised; tv a view of t.
            unsafe { embedded::mpz_mul(square.m(), &tv, &tv) };
            let m = tn + 2;
            let big = |sign: i64, shift: u64, plus: i64| {
                let mut d = Int::power_of_two(shift);
                d.add_small(plus);
                if sign < 0 {
                    // SAFETY: in place.
                    unsafe { embedded::mpz_neg(d.m(), d.p()) };
                }
                d
            };
            let random = random_limbs(square.limbs().len(), &mut seed);
            let differences = [big(1, 0, 4), big(-1, 0, 6), big(1, 64 * m as u64, 5), big(-1, 64 * m as u64, 5), big(1, 0, -1), big(1, 64 * (tn as u64 - 1), 3), big(-1, 64 * (tn as u64 + 1), 1)];
            let mut ns: Vec<Int> = differences
                .iter()
                .map(|d| {
                    let mut n = Int::new();
                    // SAFETY: all initialised.
                    unsafe { embedded::mpz_add(n.m(), square.p(), d.p()) };
                    n
                })
                .collect();
            ns.push({
                let mut n = Int::new();
                let rv = view(&random);
                // SAFETY: n initialised, rv a view.
                unsafe { embedded::mpz_set(n.m(), &rv) };
                n
            });
            for (i, n) in ns.iter().enumerate() {
                let mut want = Int::new();
                // SAFETY: all initialised.
                unsafe { embedded::mpz_sub(want.m(), n.p(), square.p()) };
                let mut r = Int::new();
                r.reserve(square.limbs().len() + 8);
                // SAFETY: r initialised.
                unsafe { embedded::mpz_set(r.m(), square.p()) };
                remainder_in_place(&mut r, n.limbs(), tn);
                assert!(r.equals(want.limbs(), want.sign() < 0), "{tn} limbs, difference {i}");
            }
        }
    }

    /// A root's temporaries are kept, and the next root, larger or
    /// smaller, computes in them over the last one's values.
    #[test]
    fn kept_temporaries_serve_the_next_root() {
        let _one = serial();
        let mut seed = 0x5eed;
        for n in [3000, 700, 5000, 16, 5001, 2999] {
            let x = random_limbs(n, &mut seed);
            let got = root_and_remainder(&x).map(|r| (r.root().to_vec(), r.remainder().to_vec()));
            assert!(got == Some(gmp_root(&x)), "{n} limbs after a root of another size");
            let kept = SPARE.lock().unwrap_or_else(|e| e.into_inner());
            let room = kept.as_ref().map_or(0, |t| t.p.0._mp_alloc as usize);
            assert!(room >= n, "{n} limbs: the temporaries were not kept ({room} limbs)");
        }
    }

    #[test]
    fn precisions_double_less_loss() {
        for target in [BASE_BITS + 1, 5000, 1 << 20, 64_000_004] {
            let ks = precisions(target);
            assert!(ks[0] <= BASE_BITS && *ks.last().unwrap() == target);
            assert!(ks.windows(2).all(|w| w[1] + LOSS <= 2 * w[0] && w[1] > w[0]), "{ks:?}");
        }
    }

    /// The correction takes an estimate one further off than the bounds
    /// allow, and the check refuses one two further: the check bites.
    #[test]
    fn a_wrong_estimate_is_corrected_or_refused() {
        let _one = serial();
        let mut seed = 7;
        for n in [16, 40, 333, 5000] {
            let x = random_limbs(n, &mut seed);
            let want = Some(gmp_root(&x));
            for nudge in [-1, 1] {
                let got = root_moved_by(&x, nudge).map(|r| (r.root().to_vec(), r.remainder().to_vec()));
                assert!(got == want, "{n} limbs, estimate moved by {nudge}");
            }
            for nudge in [-4, 4] {
                assert!(root_moved_by(&x, nudge).is_none(), "{n} limbs, estimate moved by {nudge}: not refused");
            }
        }
    }
}
