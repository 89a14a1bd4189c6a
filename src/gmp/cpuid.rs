//! What the embedded GMP's processor detection is told.
//!
//! gmp-mpfr-sys configures GMP 6.3 with `--enable-fat`: at its first call
//! the library picks each of its inner loops (`mpn_addmul_1`,
//! `mpn_mul_basecase`, `mpn_sqr_basecase`, ...) for the processor, from
//! CPUID (GMP's mpn/x86_64/fat/fat.c, `__gmpn_cpuvec_init`). Two things in
//! GMP 6.3's choice leave modern processors on slower loops than they run:
//! * its table of Intel models ends with Kabylake (family 6, model 0x9e),
//!   and AMD's with Zen 3 (family 0x19): on later processors, among them
//!   the Xeons of the GPU machines and of the build machine, it runs its
//!   generic x86_64 loops;
//! * for Broadwell and Skylake it looks for the BMI2 flag in the registers
//!   CPUID leaf 0x80000001 left behind, where Intel leaves it zero, so
//!   those run the Sandy Bridge loops.
//!
//! build.rs wraps the embedded GMP's `__gmpn_cpuid` (its entry is in
//! src/abi/hooks.rs), and [`answer`] gives GMP the processor's own
//! registers except:
//! * Intel family 6, a model GMP's table lacks, with BMI2 and ADX: model
//!   0x55 (Skylake server), so that GMP takes its Haswell, Broadwell and
//!   Skylake loops (`mulx`, `adcx`, `adox`);
//! * Intel, leaf 0x80000001: EBX carries leaf 7's BMI2 flag (bit 8), where
//!   GMP's Broadwell and Skylake branches read it;
//! * AMD, a family after 0x19 with BMI2 and ADX: family 0x19 (Zen 3's
//!   loops).
//!
//! The loops are GMP's own, each tested by GMP for the processors it was
//! written for; only the choice among them changes, and only for processors
//! that have the instructions those loops use. GMP with them took 0.88 of
//! its time for pi.c at 10^8 digits and 0.77 to 0.78 for a gcd of 519,052
//! limbs on the GPU machine's host (RESULTS.md, "The embedded GMP's choice
//! of loops").
//!
//! A leaf of the ground floor: it imports nothing of the crate.

/// The four registers CPUID returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    pub eax: u32,
    pub ebx: u32,
    pub ecx: u32,
    pub edx: u32,
}

/// The processor's maker, from CPUID leaf 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    Intel,
    Amd,
    Other,
}

/// Leaf 7's EBX: BMI2 (`mulx`) and ADX (`adcx`, `adox`).
const BMI2: u32 = 1 << 8;
const ADX: u32 = 1 << 19;

/// The family-6 Intel models GMP 6.3's fat.c has a branch for.
const GMP_INTEL_MODELS: &[u32] = &[
    0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1d, // Core 2
    0x1c, 0x26, 0x27, 0x36, // Atom
    0x1a, 0x1b, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x28, 0x29, 0x2b, 0x2c, 0x2e, 0x2f, // Nehalem, Westmere
    0x37, 0x4a, 0x4c, 0x4d, 0x5a, 0x5c, 0x5f, 0x7a, // Silvermont, Goldmont
    0x2a, 0x2d, 0x3a, 0x3e, // Sandy Bridge, Ivy Bridge
    0x3c, 0x3f, 0x45, 0x46, // Haswell
    0x3d, 0x47, 0x4f, 0x56, // Broadwell
    0x4e, 0x55, 0x5e, 0x8e, 0x9e, // Skylake, Kabylake
];

/// The model GMP computes from leaf 1's EAX.
fn model(eax: u32) -> u32 {
    ((eax >> 4) & 0xf) + ((eax >> 12) & 0xf0)
}

/// The family GMP computes from leaf 1's EAX.
fn family(eax: u32) -> u32 {
    ((eax >> 8) & 0xf) + ((eax >> 20) & 0xff)
}

/// What GMP's detection is told for leaf `id`, given the processor's own
/// registers `own` for it, its maker and its leaf 7 EBX (0 where leaf 7 is
/// beyond the processor's highest leaf).
pub fn answer(id: u32, own: Regs, vendor: Vendor, leaf7_ebx: u32) -> Regs {
    let fast_loops = leaf7_ebx & (BMI2 | ADX) == BMI2 | ADX;
    let mut regs = own;
    match (vendor, id) {
        (Vendor::Intel, 1) if fast_loops && family(own.eax) == 6 && !GMP_INTEL_MODELS.contains(&model(own.eax)) => {
            // Model 0x55: low digit 5 in bits 4..8, high digit 5 in bits 16..20.
            regs.eax = (own.eax & !0x000f_00f0) | 0x0005_0050;
        }
        (Vendor::Intel, 0x8000_0001) => regs.ebx |= leaf7_ebx & BMI2,
        (Vendor::Amd, 1) if fast_loops && family(own.eax) > 0x19 && (own.eax >> 8) & 0xf == 0xf => {
            // Family 0x19: base 0xf plus extended 0x0a in bits 20..28.
            regs.eax = (own.eax & !0x0ff0_0000) | (0x0a << 20);
        }
        _ => {}
    }
    regs
}

/// CPUID leaf `id` (subleaf 0) on this processor.
#[cfg(target_arch = "x86_64")]
fn cpuid(id: u32) -> Regs {
    // SAFETY: CPUID exists on every x86_64 processor; it only reads.
    #[allow(unused_unsafe)]
    let r = unsafe { core::arch::x86_64::__cpuid_count(id, 0) };
    Regs { eax: r.eax, ebx: r.ebx, ecx: r.ecx, edx: r.edx }
}

/// Whether a processor is one GMP's own configuration builds with its
/// Zen 3 directory (mpn/x86_64/zen3, for AMD family 0x19: Zen 3 and Zen 4)
/// or a later AMD family with the instructions of those loops (BMI2 and
/// ADX), given its leaf 1 EAX, its maker and its leaf 7 EBX.
pub fn zen3_or_later(leaf1_eax: u32, vendor: Vendor, leaf7_ebx: u32) -> bool {
    vendor == Vendor::Amd && family(leaf1_eax) >= 0x19 && leaf7_ebx & (BMI2 | ADX) == BMI2 | ADX
}

/// This processor's maker and its leaf 7 EBX (0 where leaf 7 is beyond
/// its highest leaf).
#[cfg(target_arch = "x86_64")]
fn vendor_and_leaf7() -> (Vendor, u32) {
    let leaf0 = cpuid(0);
    let vendor = match (&leaf0.ebx.to_le_bytes(), &leaf0.edx.to_le_bytes(), &leaf0.ecx.to_le_bytes()) {
        (b"Genu", b"ineI", b"ntel") => Vendor::Intel,
        (b"Auth", b"enti", b"cAMD") => Vendor::Amd,
        _ => Vendor::Other,
    };
    (vendor, if leaf0.eax >= 7 { cpuid(7).ebx } else { 0 })
}

/// [`answer`] for leaf `id` on this processor.
#[cfg(target_arch = "x86_64")]
pub fn on_this_processor(id: u32) -> Regs {
    let (vendor, leaf7_ebx) = vendor_and_leaf7();
    answer(id, cpuid(id), vendor, leaf7_ebx)
}

/// [`zen3_or_later`] for this processor.
#[cfg(target_arch = "x86_64")]
pub fn this_is_zen3_or_later() -> bool {
    let (vendor, leaf7_ebx) = vendor_and_leaf7();
    zen3_or_later(cpuid(1).eax, vendor, leaf7_ebx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf1(family: u32, model: u32) -> u32 {
        let (base, ext) = if family >= 0xf { (0xf, family - 0xf) } else { (family, 0) };
        (ext << 20) | ((model >> 4) << 16) | (base << 8) | ((model & 0xf) << 4) | 0x7
    }

    fn regs(eax: u32) -> Regs {
        Regs { eax, ebx: 0x1234, ecx: 0x5678, edx: 0x9abc }
    }

    /// Unknown Intel models with the instructions become Skylake server
    /// (stepping and the other bits kept); known models, processors without
    /// BMI2 or ADX, and other leaves keep their own answer; leaf 0x80000001
    /// carries BMI2 on Intel only; AMD after Zen 3 becomes Zen 3.
    #[test]
    fn answers() {
        let both = BMI2 | ADX | 1;
        let sapphire = leaf1(6, 0x8f);
        let told = answer(1, regs(sapphire), Vendor::Intel, both);
        assert_eq!((family(told.eax), model(told.eax), told.eax & 0xf), (6, 0x55, 0x7));
        assert_eq!((told.ebx, told.ecx, told.edx), (0x1234, 0x5678, 0x9abc));
        assert_eq!(model(answer(1, regs(leaf1(6, 0xcf)), Vendor::Intel, both).eax), 0x55);
        for kept in [answer(1, regs(sapphire), Vendor::Intel, BMI2), answer(1, regs(sapphire), Vendor::Intel, ADX), answer(1, regs(sapphire), Vendor::Amd, both)] {
            assert_eq!(kept, regs(sapphire));
        }
        for known in [0x3c, 0x3d, 0x4e, 0x55, 0x9e] {
            assert_eq!(answer(1, regs(leaf1(6, known)), Vendor::Intel, both), regs(leaf1(6, known)));
        }
        assert_eq!(answer(7, regs(sapphire), Vendor::Intel, both), regs(sapphire));
        assert_eq!(answer(0x8000_0001, regs(0), Vendor::Intel, both).ebx, 0x1234 | BMI2);
        assert_eq!(answer(0x8000_0001, regs(0), Vendor::Intel, ADX).ebx, 0x1234);
        assert_eq!(answer(0x8000_0001, regs(0), Vendor::Amd, both).ebx, 0x1234);
        let zen5 = leaf1(0x1a, 0x24);
        let told = answer(1, regs(zen5), Vendor::Amd, both);
        assert_eq!((family(told.eax), model(told.eax)), (0x19, 0x24));
        assert_eq!(answer(1, regs(leaf1(0x19, 0x11)), Vendor::Amd, both), regs(leaf1(0x19, 0x11)));
        assert_eq!(answer(1, regs(zen5), Vendor::Amd, BMI2), regs(zen5));
    }

    /// Zen 3, Zen 4 and later AMD families with BMI2 and ADX; not Zen 2,
    /// not Intel, not without the instructions.
    #[test]
    fn zen3_and_later() {
        let both = BMI2 | ADX;
        for (family, model) in [(0x19, 0x01), (0x19, 0x11), (0x19, 0x61), (0x1a, 0x24)] {
            assert!(zen3_or_later(leaf1(family, model), Vendor::Amd, both), "family {family:#x} model {model:#x}");
        }
        assert!(!zen3_or_later(leaf1(0x17, 0x31), Vendor::Amd, both));
        assert!(!zen3_or_later(leaf1(0x19, 0x01), Vendor::Amd, BMI2));
        assert!(!zen3_or_later(leaf1(0x19, 0x01), Vendor::Intel, both));
        assert!(!zen3_or_later(leaf1(6, 0xcf), Vendor::Intel, both));
    }

    /// On a processor whose answer changed, the embedded GMP took the loops
    /// that answer chooses: its dispatch table holds GMP's Broadwell
    /// `mpn_addmul_1` (Intel) or its Zen one (AMD) after its first call.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_embedded_gmp_takes_the_loops() {
        unsafe extern "C" {
            static __gmpn_cpuvec: [usize; 32];
            fn __cugmp_cpu__gmpn_addmul_1_coreibwl();
            fn __cugmp_cpu__gmpn_addmul_1_zen();
        }
        let leaf1 = cpuid(1);
        let told = on_this_processor(1);
        if told == leaf1 && on_this_processor(0x8000_0001) == cpuid(0x8000_0001) {
            eprintln!("skipped: GMP's own detection knows this processor (leaf 1 EAX {:#x})", leaf1.eax);
            return;
        }
        let mut r = [0; 2];
        // SAFETY: one-limb operands and room for the result; the call makes
        // GMP fill its table.
        unsafe { super::super::embedded::mpn_add_n(r.as_mut_ptr(), [1].as_ptr(), [2].as_ptr(), 1) };
        assert_eq!(r[0], 3);
        let want = if family(told.eax) == 6 { __cugmp_cpu__gmpn_addmul_1_coreibwl as *const () as usize } else { __cugmp_cpu__gmpn_addmul_1_zen as *const () as usize };
        // SAFETY: GMP's table is written once, at its first call (above);
        // its first 32 words are function pointers.
        let table = unsafe { std::ptr::read_volatile(&raw const __gmpn_cpuvec) };
        assert!(table.contains(&want), "the embedded GMP's table lacks the loop its processor answer chooses (leaf 1 EAX {:#x} told as {:#x})", leaf1.eax, told.eax);
    }
}
