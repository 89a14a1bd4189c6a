//! `mpz_t` storage as GMP 6.3 manages it: fresh variables share a read-only
//! dummy limb, clearing frees only what was allocated, limbs are allocated
//! and grown through GMP's memory functions (so `mp_set_memory_functions`
//! is honoured and the overflow checks are GMP's). And [`Int`], an `mpz_t`
//! owned by Rust code, cleared on drop.

use super::{__mpz_struct, embedded, limbs, mp_bitcnt_t, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use libc::c_int;
use std::mem::MaybeUninit;

/// What a fresh `mpz_t` points at (GMP 6.3 does the same): reading it gives
/// zero limbs in use; `_mp_alloc == 0` makes every writer reallocate first.
static DUMMY_LIMB: mp_limb_t = 0xc1a0;

/// `mpz_init`: zero, no limbs allocated.
///
/// # Safety
/// `x` must be valid for writing an `mpz_t`.
pub unsafe fn init(x: mpz_ptr) {
    unsafe {
        (*x)._mp_alloc = 0;
        (*x)._mp_size = 0;
        (*x)._mp_d = &DUMMY_LIMB as *const mp_limb_t as *mut mp_limb_t;
    }
}

/// `mpz_init2`: zero, with room for `bits` bits.
///
/// # Safety
/// `x` must be valid for writing an `mpz_t`.
pub unsafe fn init2(x: mpz_ptr, bits: mp_bitcnt_t) {
    // GMP: one limb for 0 bits, else ceil(bits / 64); beyond INT_MAX limbs
    // the _mp_alloc field overflows, which GMP reports and aborts on.
    let count = 1 + (bits - (bits != 0) as mp_bitcnt_t) / 64;
    if count > c_int::MAX as mp_bitcnt_t {
        unsafe { embedded::overflow_in_mpz() };
    }
    let bytes = count as usize * std::mem::size_of::<mp_limb_t>();
    unsafe {
        (*x)._mp_d = (embedded::__gmp_allocate_func)(bytes) as *mut mp_limb_t;
        (*x)._mp_alloc = count as c_int;
        (*x)._mp_size = 0;
    }
}

/// `mpz_clear`: frees what was allocated (nothing for a fresh variable).
///
/// # Safety
/// `x` must be an initialised `mpz_t`, not used again before another init.
pub unsafe fn clear(x: mpz_ptr) {
    unsafe {
        let alloc = (*x)._mp_alloc;
        if alloc != 0 {
            let bytes = alloc as usize * std::mem::size_of::<mp_limb_t>();
            (embedded::__gmp_free_func)((*x)._mp_d as *mut libc::c_void, bytes);
        }
    }
}

/// Store a magnitude (high zero limbs allowed: they are stripped) and a sign
/// in `r`, growing it through GMP's reallocation. Large magnitudes are
/// copied on several threads (`parallel::copy_limbs`).
///
/// # Safety
/// `r` must be an initialised `mpz_t`; `magnitude` must not alias `r`'s limbs.
pub unsafe fn store(r: mpz_ptr, magnitude: &[mp_limb_t], negative: bool) {
    let mut n = magnitude.len();
    while n > 0 && magnitude[n - 1] == 0 {
        n -= 1;
    }
    unsafe {
        if ((*r)._mp_alloc as usize) < n {
            embedded::mpz_realloc(r, n as mp_size_t);
        }
        crate::parallel::copy_limbs(std::slice::from_raw_parts_mut((*r)._mp_d, n), &magnitude[..n]);
        // n <= _mp_alloc <= INT_MAX after the reallocation above.
        (*r)._mp_size = if negative { -(n as c_int) } else { n as c_int };
    }
}

/// Fresh room for `n` limbs (n >= 1) through GMP's allocation function,
/// for a result made beside an `mpz_t` and then handed to it by [`adopt`]
/// (or given back by [`free_limbs`]). Beyond INT_MAX limbs GMP's overflow
/// report, as its own reallocation gives.
///
/// # Safety
/// GMP's memory functions are set (always, at load).
unsafe fn allocate_limbs(n: usize) -> *mut mp_limb_t {
    if n > c_int::MAX as usize {
        unsafe { embedded::overflow_in_mpz() };
    }
    unsafe { (embedded::__gmp_allocate_func)(n.max(1) * std::mem::size_of::<mp_limb_t>()) as *mut mp_limb_t }
}

/// Room for at least `n` limbs in a pinned block of the pool
/// (src/pinned.rs), as (address, limbs of room), for a product the device
/// makes: its download, and its upload when it is an operand later, then
/// move by DMA alone. None where the pool has no block of that size kept
/// or cuGMP's memory functions are not GMP's (a program's own free could
/// not give the block back). Given back by [`free_limbs`] with its room,
/// or handed to an `mpz_t` by [`adopt`].
fn pinned_limbs(n: usize) -> Option<(*mut mp_limb_t, usize)> {
    if !super::memory::defaults_in_place() {
        return None;
    }
    let (p, room) = crate::pinned::take(n.checked_mul(std::mem::size_of::<mp_limb_t>())?)?;
    // A block beyond INT_MAX limbs is counted as INT_MAX (GMP's bound on
    // _mp_alloc); it still frees as the pool's by its address.
    Some((p as *mut mp_limb_t, (room / std::mem::size_of::<mp_limb_t>()).min(c_int::MAX as usize)))
}

/// `_mpz_realloc` (GMP's `__gmpz_realloc`, wrapped at link time: every
/// growth of an `mpz_t`'s limbs goes through it, the embedded GMP's
/// MPZ_REALLOC and MPZ_NEWALLOC, the program's own calls and [`store`]).
/// A growth to a pinned block's size or more takes a block of the pool
/// where one is kept ([`pinned_limbs`]), so that the number's uploads and
/// downloads are one DMA each whatever made it (`mpz_set_str`,
/// `mpz_import`, `mpz_urandomb`, sums), not only the device's products.
/// Its limbs are kept, as GMP's; its room is the block's. Anything else (a
/// smaller size, a shrink, no block kept) is GMP's own.
///
/// # Safety
/// As GMP's: `m` is an initialised `mpz_t`.
pub unsafe fn realloc(m: mpz_ptr, new_alloc: mp_size_t) -> *mut libc::c_void {
    unsafe {
        let old = (*m)._mp_alloc.max(0) as usize;
        let n = usize::try_from(new_alloc).unwrap_or(0);
        let grows = n > old && n <= c_int::MAX as usize && n * std::mem::size_of::<mp_limb_t>() >= crate::pinned::MIN_BYTES;
        if let Some((p, room)) = grows.then(|| pinned_limbs(n)).flatten() {
            // |size| <= old < n: every limb fits.
            let size = ((*m)._mp_size.unsigned_abs() as usize).min(old);
            if size > 0 {
                crate::parallel::copy_limbs(std::slice::from_raw_parts_mut(p, size), std::slice::from_raw_parts((*m)._mp_d, size));
            }
            if old > 0 {
                free_limbs((*m)._mp_d, old);
            }
            (*m)._mp_d = p;
            // room <= INT_MAX (pinned_limbs).
            (*m)._mp_alloc = room as c_int;
            return p as *mut libc::c_void;
        }
        embedded::mpz_realloc_gmp(m, new_alloc)
    }
}

/// Gives back room `allocate_limbs(n)` made.
///
/// # Safety
/// `p` came from `allocate_limbs(n)` and is not used again.
pub unsafe fn free_limbs(p: *mut mp_limb_t, n: usize) {
    unsafe { (embedded::__gmp_free_func)(p as *mut libc::c_void, n.max(1) * std::mem::size_of::<mp_limb_t>()) };
}

/// Makes `r` the number whose `n` limbs (high zero limbs allowed) are at
/// `p`, from `allocate_limbs(room)` (room >= n), with the sign `negative`;
/// r's own limbs are freed. No copy: as GMP's `mpz_mul` does where its
/// result is one of its operands or needs more room.
///
/// # Safety
/// `r` is an initialised `mpz_t`; `p` came from `allocate_limbs(room)` or
/// `pinned_limbs` with `room`.
unsafe fn adopt(r: mpz_ptr, p: *mut mp_limb_t, room: usize, n: usize, negative: bool) {
    unsafe {
        let limbs = std::slice::from_raw_parts(p, n);
        let size = n - limbs.iter().rev().take_while(|&&l| l == 0).count();
        clear(r);
        (*r)._mp_d = p;
        // room <= INT_MAX: allocate_limbs checked it.
        (*r)._mp_alloc = room.max(1) as c_int;
        (*r)._mp_size = if negative { -(size as c_int) } else { size as c_int };
    }
}

/// Fresh limbs for a result made beside an `mpz_t` and then handed to it
/// (`give_to`, no copy), or freed on drop where the result is not taken (a
/// device that failed, a computation that gave up).
pub struct FreshLimbs {
    p: *mut mp_limb_t,
    room: usize,
}

impl FreshLimbs {
    /// Room for `n` limbs (n <= INT_MAX) in a pinned block of the pool
    /// where one is kept ([`pinned_limbs`]); None otherwise.
    pub fn pinned(n: usize) -> Option<FreshLimbs> {
        pinned_limbs(n).map(|(p, room)| FreshLimbs { p, room })
    }

    /// Room for `n` limbs through GMP's allocation function (beyond INT_MAX
    /// limbs GMP's overflow report, [`allocate_limbs`]).
    pub fn allocated(n: usize) -> FreshLimbs {
        // SAFETY: GMP's memory functions are set (always, at load).
        FreshLimbs { p: unsafe { allocate_limbs(n) }, room: n.max(1) }
    }

    /// Room for `n` limbs: a pinned block where the pool keeps one (the
    /// device's download into it, and a later upload of the number, are
    /// then a DMA alone), else GMP's allocation.
    pub fn pinned_or_allocated(n: usize) -> FreshLimbs {
        FreshLimbs::pinned(n).unwrap_or_else(|| FreshLimbs::allocated(n))
    }

    /// The limbs of room (at least those asked for), holding whatever the
    /// allocator left there: written before they are read.
    pub fn limbs(&mut self) -> &mut [mp_limb_t] {
        // SAFETY: room limbs at p, ours until given or dropped.
        unsafe { std::slice::from_raw_parts_mut(self.p, self.room) }
    }

    /// Makes `r` the number whose first `n` limbs of room (high zero limbs
    /// allowed) hold its magnitude, with the sign `negative` ([`adopt`]).
    ///
    /// # Safety
    /// `r` is an initialised `mpz_t`; n <= the room asked for.
    pub unsafe fn give_to(self, r: mpz_ptr, n: usize, negative: bool) {
        let this = std::mem::ManuallyDrop::new(self);
        unsafe { adopt(r, this.p, this.room, n.min(this.room), negative) };
    }
}

impl AsMut<[mp_limb_t]> for FreshLimbs {
    fn as_mut(&mut self) -> &mut [mp_limb_t] {
        self.limbs()
    }
}

impl Drop for FreshLimbs {
    fn drop(&mut self) {
        // SAFETY: p came from pinned_limbs or allocate_limbs with room.
        unsafe { free_limbs(self.p, self.room) };
    }
}

/// A GMP integer owned here: initialised and cleared through the embedded
/// GMP (so a program's memory functions are honoured).
pub struct Int(pub __mpz_struct);

impl Drop for Int {
    fn drop(&mut self) {
        // SAFETY: initialised in Int::new, cleared once.
        unsafe { embedded::mpz_clear(&mut self.0) };
    }
}

impl Default for Int {
    fn default() -> Int {
        Int::new()
    }
}

impl Int {
    /// Zero.
    pub fn new() -> Int {
        let mut z = MaybeUninit::<__mpz_struct>::uninit();
        // SAFETY: mpz_init initialises the whole struct.
        unsafe {
            embedded::mpz_init(z.as_mut_ptr());
            Int(z.assume_init())
        }
    }

    pub fn p(&self) -> mpz_srcptr {
        &self.0
    }

    pub fn m(&mut self) -> mpz_ptr {
        &mut self.0
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> c_int {
        self.0._mp_size.signum()
    }

    /// The magnitude's limbs in use.
    pub fn limbs(&self) -> &[mp_limb_t] {
        // SAFETY: self is an initialised mpz_t.
        unsafe { limbs(self.p()) }
    }

    /// Whether this is `magnitude` (no high zero limbs) with that sign.
    pub fn equals(&self, magnitude: &[mp_limb_t], negative: bool) -> bool {
        self.limbs() == magnitude && (self.sign() < 0) == (negative && !magnitude.is_empty())
    }
}

/// A read-only mpz_t over `limbs` (top limb nonzero, fewer than 2^31):
/// GMP reads it and never writes or frees it.
pub fn view(limbs: &[mp_limb_t]) -> __mpz_struct {
    debug_assert!(limbs.last() != Some(&0));
    let count = limbs.len() as c_int;
    __mpz_struct { _mp_alloc: count, _mp_size: count, _mp_d: limbs.as_ptr() as *mut mp_limb_t }
}
