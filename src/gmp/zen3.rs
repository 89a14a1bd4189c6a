//! GMP's own choice of loops and thresholds for Zen 3 and Zen 4, made for
//! the embedded GMP, whose fat build lacks it.
//!
//! GMP 6.3 configured on a Zen 3 or Zen 4 processor builds from its
//! mpn/x86_64/zen3 directory: Broadwell's `mpn_mul_basecase`,
//! `mpn_sqr_basecase` and `mpn_addmul_1` (`mulx`, `adcx`, `adox`), a
//! `mpn_mul_1` of its own, and the thresholds its tuning found there. Its
//! fat build, the one embedded (gmp-mpfr-sys configures `--enable-fat`),
//! has no Zen 3 entry: fat.c gives family 0x19 its Zen 1 loops and
//! thresholds. Those take 1.3x to 1.8x the time of GMP's Zen 3 choice for
//! products of 3 to 30 limbs on the build machine's Zen 3, 1.1x to 1.3x
//! up to 10^4 limbs (RESULTS.md, "GMP's loops for Zen 3").
//!
//! [`install`] puts GMP's Broadwell loops (present in its fat build) in the
//! three slots GMP's Zen 3 directory takes them for, and in `mul_1`'s,
//! whose Zen 3 loop the fat build lacks (Broadwell's was measured faster
//! than the Zen 1 loop there), and sets the Karatsuba, Toom-3 and
//! `bmod_1` thresholds of mpn/x86_64/zen3/gmp-mparam.h. The loops are
//! GMP's, each tested by GMP; the results are GMP's limb for limb. Only
//! AMD family 0x19 and later with BMI2 and ADX take them
//! (`cpuid::zen3_or_later`).
//!
//! It writes GMP's table through [`dispatch`] and reads nothing else of
//! the crate.

use super::dispatch::{self, Slot, Threshold};

/// mpn/x86_64/zen3/gmp-mparam.h's thresholds (GMP 6.3), in limbs.
const THRESHOLDS: [(Threshold, usize); 5] = [
    (Threshold::MulToom22, 20),
    (Threshold::MulToom33, 89),
    (Threshold::SqrToom2, 32),
    (Threshold::SqrToom3, 109),
    (Threshold::Bmod1ToMod1, 18),
];

/// GMP's loops for each slot on Zen 3 and later, where the embedded GMP
/// has them.
#[cfg(all(target_arch = "x86_64", cugmp_broadwell_loops))]
fn loops() -> [(Slot, usize); 4] {
    use super::embedded::*;
    [
        (Slot::MulBasecase, mpn_mul_basecase_coreibwl as *const () as usize),
        (Slot::SqrBasecase, mpn_sqr_basecase_coreibwl as *const () as usize),
        (Slot::Mul1, mpn_mul_1_coreibwl as *const () as usize),
        (Slot::Addmul1, mpn_addmul_1_coreibwl as *const () as usize),
    ]
}

/// Whether this processor takes GMP's Zen 3 choice (and the embedded GMP
/// has its loops).
pub fn applies() -> bool {
    #[cfg(all(target_arch = "x86_64", cugmp_broadwell_loops))]
    return super::cpuid::this_is_zen3_or_later();
    #[allow(unreachable_code)]
    false
}

/// Puts GMP's Zen 3 loops and thresholds in its table where [`applies`];
/// `wanted` false (`CUGMP_CPU_ZEN3=0`) keeps the fat build's own. Returns
/// whether it did. Called once, from the load-time constructor, before any
/// thread of the program calls GMP and before src/cpu/ifma.rs takes the
/// schoolbook slot on processors with IFMA.
pub fn install(wanted: bool) -> bool {
    if !wanted || !applies() {
        return false;
    }
    #[cfg(all(target_arch = "x86_64", cugmp_broadwell_loops))]
    for (slot, f) in loops() {
        dispatch::replace(slot, f);
    }
    for (which, limbs) in THRESHOLDS {
        dispatch::set_threshold(which, limbs);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On Zen 3 and later the table holds GMP's Broadwell loops and the
    /// Zen 3 thresholds once the library is loaded (its constructor ran
    /// `install`), unless CUGMP_CPU_ZEN3=0; elsewhere this says it is
    /// skipped.
    #[test]
    fn the_table_holds_gmps_zen3_choice() {
        if !applies() {
            eprintln!("skipped: not a Zen 3 or later processor, or no Broadwell loops in the embedded GMP");
            return;
        }
        if matches!(std::env::var("CUGMP_CPU_ZEN3").as_deref(), Ok("0") | Ok("off")) {
            eprintln!("skipped: CUGMP_CPU_ZEN3=0");
            return;
        }
        #[cfg(all(target_arch = "x86_64", cugmp_broadwell_loops))]
        for (slot, f) in loops() {
            // On IFMA processors (Zen 4) the CPU engine's kernel takes the
            // schoolbook slot after this module's install.
            if matches!(slot, Slot::MulBasecase) && std::arch::is_x86_feature_detected!("avx512ifma") {
                continue;
            }
            assert_eq!(dispatch::function(slot), f, "{slot:?}");
        }
        for (which, limbs) in THRESHOLDS {
            assert_eq!(dispatch::threshold(which), limbs, "{which:?}");
        }
    }
}
