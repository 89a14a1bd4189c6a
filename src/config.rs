//! Run-time settings from the environment, read once per process.
//!
//! * `CUGMP_GPU=off|auto|force`: `auto` (default) uses the GPU where measured
//!   thresholds say it wins; `force` sends every operation the GPU engine
//!   supports to it, whatever the size (the tests use it); `off` never touches
//!   the driver.
//! * `CUGMP_LOG=1`: device found, kernels loaded, each routing decision, to stderr.
//! * `CUGMP_FAULT=mul|gpu-oom|gpu-launch|gpu-lanes`: deliberately corrupt or
//!   fail, to prove the tests and the fallbacks catch it (`gpu-lanes`: a
//!   product on lanes fails once their kernels are queued). Never set in
//!   production.
//! * `CUGMP_CHECK=1`: recompute every GPU result on the CPU and abort on a mismatch.
//! * `CUGMP_GPU_MEM_LIMIT=bytes` (suffixes K, M, G: powers of 1024): the most
//!   device memory cuGMP's operations may hold at once; an operation that
//!   would need more runs on the CPU.
//! * `CUGMP_FORCE_MIN_LIMBS=n`: under `force`, operations on fewer than n
//!   limbs stay on the CPU (GMP's test programs make millions of 1- and
//!   2-limb operations, each a trip to the device and back under force; the
//!   device runs of those suites use 16, and say so).
//! * `CUGMP_RADIX_LEVELS=k` (tuning only): radix conversion splits at most
//!   k times (2^k leaves for GMP's own conversion) instead of down to leaves
//!   of about 128 limbs (src/algorithms/radix/to_digits.rs).
//! * `CUGMP_CPU_SHARE=n` (limbs; 0: never): `mpz_mul` products whose
//!   shorter operand has n limbs or more and which stay on the CPU are
//!   shared with the kept helper threads (src/cpu.rs, `mul_on_cores`), and
//!   so are the products of GMP's half-gcd matrix steps
//!   (src/algorithms/hgcd.rs, from `route::HGCD_SHARE_FROM` limbs whatever
//!   n is). Unset: from `route::CPU_SHARE_FROM` limbs on hosts of 4 cores
//!   or more while a GPU serves the process, else never (without a GPU,
//!   cuGMP is GMP).
//! * `CUGMP_CPU_IFMA=0`: the CPU engine keeps GMP's own loops for its small
//!   products on processors with AVX-512 IFMA, instead of its schoolbook
//!   kernel on those instructions (src/cpu/ifma.rs; on by default, with or
//!   without a GPU).
//! * `CUGMP_CPU_ZEN3=0`: on AMD Zen 3 and later, the embedded GMP keeps its
//!   fat build's Zen 1 loops and thresholds instead of those GMP's own
//!   configuration takes for Zen 3 (src/gmp/zen3.rs; on by default).
//! * `CUGMP_PINNED=0`: large GPU products never take pinned blocks for
//!   their limbs (src/pinned.rs); by default they do wherever a device
//!   serves the process, so that their transfers are DMA alone.
//! * `CUGMP_CPU_STEP_BACK=0` (tuning only): the helper threads never step
//!   back from a busy host (src/helpers.rs); by default they sleep for a
//!   while when the scheduler takes their cores for other threads.
//! * `CUGMP_CPU_HELPERS=n` (1 to 8, tuning only): the helper threads kept
//!   for shared products; default `route::CPU_SHARE_HELPERS`, fewer where
//!   the host has fewer cores to spare.
//! * `CUGMP_CPU_SHARE_TWICE=n` (limbs; 0: never; tuning only): shared
//!   `mpz_mul` products whose shorter operand has n limbs or more are cut
//!   twice (up to nine parts) rather than once; default
//!   `route::CPU_SHARE_TWICE_FROM` where 4 helpers or more are kept.
//! * `CUGMP_HGCD_HALVES=n` (limbs; 0: never; tuning only): a half-gcd
//!   step's products shared among the cores whose shorter operand has n
//!   limbs or more and whose longer one twice as many are cut in halves,
//!   however many helpers there are; by default from
//!   `route::HGCD_HALVES_FROM`, where the helpers can take every half at
//!   once.
//! * `CUGMP_LOADED_PRODUCT_US=n` (tuning only): while other products are
//!   on the device, a product's GPU time is taken to be at least n
//!   microseconds (src/algorithms/route.rs, `queue_favours_cpu`); default
//!   route::LOADED_PRODUCT_US.
//! * `CUGMP_GPU_FROM_MUL=n`, `CUGMP_GPU_FROM_INTERNAL=n` (limbs, tuning
//!   only): under `auto`, the shorter operand's size from which `mpz_mul`
//!   and `mpn_mul`, and GMP's internal products, go to the GPU, instead of
//!   the measured thresholds (src/algorithms/route.rs, `measured_threshold`);
//!   `cugmp_threshold()` reports what is in force.
//! * `CUGMP_GPU_FROM_STEP=n` (limbs by `route::product_size`; 0: never;
//!   tuning only): under `auto`, the size from which a half-gcd matrix
//!   step's products go to the GPU at once, a slot each
//!   (src/algorithms/hgcd.rs); default GMP's internal products' threshold.
//! * `CUGMP_GPU_QUEUES=n` (1 to 16): streams the device runs products of
//!   different threads on at once (src/gpu/device.rs, `Queue`); default
//!   DEFAULT_GPU_QUEUES.
//! * `CUGMP_GPUS=n` (at least 1): the most devices cuGMP opens (default:
//!   every device the driver shows). Threads spread over them; a product
//!   one device cannot hold is shared among them (src/algorithms/product.rs,
//!   `product_over_devices`).
//! * `CUGMP_PRODUCT=auto|ntt|gfp`: the GPU engine of products: `ntt` the
//!   transforms over 31-bit primes (src/gpu/ntt), `gfp` the FFT over
//!   the generalized Fermat prime (2^61 + 2^41)^8 + 1 (src/gpu/gfp) for
//!   every product it has a transform for, `auto` (default) whichever
//!   measured faster at the size: the NTT at every size
//!   (src/gpu/ntt/product.rs, `by_gfp`). Products mod B^n - 1 stay on the
//!   NTT.
//! * `CUGMP_NTT_WIDE=n` (limbs; 0: never; tests and tuning only): products
//!   in one convolution of n limbs and more (a whole product's two
//!   operands, a chunk's, a product mod B^n - 1's n) take the NTT's wide
//!   sets, five primes with a limb a coefficient, where those have a
//!   transform; default `WIDE_FROM` (src/gpu/ntt/plan.rs).
//! * `CUGMP_GPU_SCHOOLBOOK=n` (limbs; 0: never; tests and tuning only):
//!   small products on the GPU of at most n^2 limb products (un vn <=
//!   n^2, and at most 2^14 limbs in all) are made by columns, every limb
//!   product summed on the device's integer units, not by the transforms;
//!   default `COLUMNS_UPTO` (src/gpu/ntt/small.rs).
//! * `CUGMP_NTT_LANES=n` (points; 0: never; tests and tuning only): whole
//!   products on transforms of n points and more run each prime's passes
//!   on streams of their own (src/gpu/ntt/product.rs, `transforms_in_lanes`);
//!   default `LANES_FROM` (src/gpu/ntt/plan.rs).
//! * `CUGMP_NTT_PIECE=n` (limbs, tests and tuning only): the NTT makes every
//!   product whose shorter operand has more than n limbs by pieces of n
//!   limbs, as it makes those past its longest transform
//!   (src/gpu/ntt/plan.rs, `Plan::Pieces`), so the tests reach that plan
//!   with operands GMP multiplies in milliseconds.
//! * `CUGMP_STATS=1`: print per-operation counts, bytes copied, GPU time and
//!   fallbacks to stderr when the process exits.
//! * `CUGMP_PROFILE=1`: print, at exit, where the time went: per operation
//!   and size, the CPU engine's time and the GPU's (src/stats.rs).
//!
//! A leaf: it imports nothing of the crate, and every layer may read it.

use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuMode {
    Off,
    Auto,
    Force,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Flip the low bit of every product's lowest limb (proves the differential tests bite).
    Mul,
    /// Pretend every device allocation fails.
    GpuOom,
    /// Pretend every kernel launch fails.
    GpuLaunch,
    /// Fail every product on lanes after the lanes' first kernels are
    /// queued (src/gpu/ntt/product.rs, `transforms_in_lanes`), so that its
    /// buffers are freed while those kernels may still run.
    GpuLanes,
}

/// The GPU engine of whole products (`CUGMP_PRODUCT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProductEngine {
    Auto,
    Ntt,
    Gfp,
}

#[derive(Debug)]
pub struct Config {
    pub gpu: GpuMode,
    pub log: bool,
    pub fault: Option<Fault>,
    pub check: bool,
    pub stats: bool,
    pub profile: bool,
    pub gpu_mem_limit: Option<usize>,
    /// `CUGMP_FORCE_MIN_LIMBS` (0 when unset: force sends every size).
    pub force_min_limbs: usize,
    /// `CUGMP_RADIX_LEVELS` (radix conversion clamps it to what it allows).
    pub radix_levels: Option<usize>,
    /// Device memory the stream-ordered allocator keeps for reuse after
    /// frees (`CUGMP_GPU_POOL`, default DEFAULT_GPU_POOL); 0 gives every
    /// free back to the device at once.
    pub gpu_pool: usize,
    /// `CUGMP_CPU_SHARE` as set (Some(0): never); None for the default.
    pub cpu_share: Option<usize>,
    /// `CUGMP_CPU_IFMA`: false where set to 0 or off.
    pub cpu_ifma: bool,
    /// `CUGMP_CPU_ZEN3`: false where set to 0 or off.
    pub cpu_zen3: bool,
    /// `CUGMP_CPU_HELPERS` as set, 1 to 8; None for the default.
    pub cpu_helpers: Option<usize>,
    /// `CUGMP_CPU_STEP_BACK`: false where set to 0 or off.
    pub cpu_step_back: bool,
    /// `CUGMP_PINNED`: false where set to 0 or off.
    pub pinned: bool,
    /// `CUGMP_HGCD_THRESHOLD` as set (Some(0): GMP's own half-gcd); None
    /// for the default.
    pub hgcd_threshold: Option<usize>,
    /// `CUGMP_CPU_SHARE_TWICE` as set (Some(0): never); None for the default.
    pub cpu_share_twice: Option<usize>,
    /// `CUGMP_HGCD_HALVES` as set (Some(0): never); None for the default.
    pub hgcd_halves: Option<usize>,
    /// `CUGMP_GPU_QUEUES`, 1 to 16 (default DEFAULT_GPU_QUEUES).
    pub gpu_queues: usize,
    /// `CUGMP_LOADED_PRODUCT_US` as set; None for the default.
    pub loaded_product_us: Option<usize>,
    /// `CUGMP_GPU_FROM_MUL` and `CUGMP_GPU_FROM_INTERNAL` as set; None for
    /// the measured thresholds.
    pub gpu_from_mul: Option<usize>,
    pub gpu_from_internal: Option<usize>,
    /// `CUGMP_GPU_FROM_STEP` as set (Some(0): never); None for Internal's
    /// threshold.
    pub gpu_from_step: Option<usize>,
    /// `CUGMP_GPUS`, at least 1 (None: every device).
    pub gpus: Option<usize>,
    pub product: ProductEngine,
    /// `CUGMP_NTT_PIECE` as set (0 ignored).
    pub ntt_piece: Option<usize>,
    /// `CUGMP_NTT_WIDE` as set (0: never).
    pub ntt_wide: Option<usize>,
    /// `CUGMP_GPU_SCHOOLBOOK` as set (0: never).
    pub gpu_schoolbook: Option<usize>,
    /// `CUGMP_NTT_LANES` as set (0: never).
    pub ntt_lanes: Option<usize>,
}

/// Default of `CUGMP_GPU_QUEUES`.
pub(crate) const DEFAULT_GPU_QUEUES: usize = 4;

/// Default of `CUGMP_GPU_POOL`: room for the buffers of a product of about
/// 10^7 limbs, so repeated large products do not map fresh device memory
/// each time.
pub(crate) const DEFAULT_GPU_POOL: usize = 4 << 30;

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

impl Config {
    fn from_env() -> Config {
        let gpu = match std::env::var("CUGMP_GPU").as_deref() {
            Ok("off") | Ok("0") => GpuMode::Off,
            Ok("force") => GpuMode::Force,
            Ok("auto") | Ok("") | Err(_) => GpuMode::Auto,
            Ok(other) => {
                eprintln!("cugmp: CUGMP_GPU={other:?} is not off, auto or force; using auto");
                GpuMode::Auto
            }
        };
        let fault = match std::env::var("CUGMP_FAULT").as_deref() {
            Ok("mul") => Some(Fault::Mul),
            Ok("gpu-oom") => Some(Fault::GpuOom),
            Ok("gpu-launch") => Some(Fault::GpuLaunch),
            Ok("gpu-lanes") => Some(Fault::GpuLanes),
            Ok("") | Err(_) => None,
            Ok(other) => {
                eprintln!("cugmp: CUGMP_FAULT={other:?} is not mul, gpu-oom, gpu-launch or gpu-lanes; ignored");
                None
            }
        };
        let product = match std::env::var("CUGMP_PRODUCT").as_deref() {
            Ok("gfp") => ProductEngine::Gfp,
            Ok("ntt") => ProductEngine::Ntt,
            Ok("auto") | Ok("") | Err(_) => ProductEngine::Auto,
            Ok(other) => {
                eprintln!("cugmp: CUGMP_PRODUCT={other:?} is not auto, ntt or gfp; using auto");
                ProductEngine::Auto
            }
        };
        let bytes = |name, otherwise| number(name, parse_bytes, "a byte count (e.g. 512M, 4G)", otherwise);
        let count = |name| number(name, |v| v.trim().parse::<usize>().ok(), "a count", "ignored");
        let gpu_mem_limit = bytes("CUGMP_GPU_MEM_LIMIT", "no limit");
        let gpu_pool = bytes("CUGMP_GPU_POOL", "using the default").unwrap_or(DEFAULT_GPU_POOL);
        let force_min_limbs = count("CUGMP_FORCE_MIN_LIMBS").unwrap_or(0);
        let radix_levels = count("CUGMP_RADIX_LEVELS");
        let cpu_share = count("CUGMP_CPU_SHARE");
        let cpu_helpers = count("CUGMP_CPU_HELPERS").map(|n| n.clamp(1, 8));
        let cpu_share_twice = count("CUGMP_CPU_SHARE_TWICE");
        let hgcd_halves = count("CUGMP_HGCD_HALVES");
        let hgcd_threshold = count("CUGMP_HGCD_THRESHOLD");
        let gpu_queues = count("CUGMP_GPU_QUEUES").unwrap_or(DEFAULT_GPU_QUEUES).clamp(1, 16);
        let loaded_product_us = count("CUGMP_LOADED_PRODUCT_US");
        let gpus = count("CUGMP_GPUS").map(|n| n.max(1));
        let gpu_from_mul = count("CUGMP_GPU_FROM_MUL");
        let gpu_from_internal = count("CUGMP_GPU_FROM_INTERNAL");
        let gpu_from_step = count("CUGMP_GPU_FROM_STEP");
        let ntt_piece = count("CUGMP_NTT_PIECE").filter(|&n| n > 0);
        let ntt_wide = count("CUGMP_NTT_WIDE");
        let ntt_lanes = count("CUGMP_NTT_LANES");
        let gpu_schoolbook = count("CUGMP_GPU_SCHOOLBOOK");
        Config {
            gpu,
            log: flag("CUGMP_LOG"),
            fault,
            check: flag("CUGMP_CHECK"),
            stats: flag("CUGMP_STATS"),
            profile: flag("CUGMP_PROFILE"),
            gpu_mem_limit,
            force_min_limbs,
            radix_levels,
            gpu_pool,
            cpu_share,
            cpu_ifma: !matches!(std::env::var("CUGMP_CPU_IFMA").as_deref(), Ok("0") | Ok("off")),
            cpu_zen3: !matches!(std::env::var("CUGMP_CPU_ZEN3").as_deref(), Ok("0") | Ok("off")),
            cpu_helpers,
            cpu_step_back: !matches!(std::env::var("CUGMP_CPU_STEP_BACK").as_deref(), Ok("0") | Ok("off")),
            pinned: !matches!(std::env::var("CUGMP_PINNED").as_deref(), Ok("0") | Ok("off")),
            hgcd_threshold,
            cpu_share_twice,
            hgcd_halves,
            gpu_queues,
            loaded_product_us,
            gpu_from_mul,
            gpu_from_internal,
            gpu_from_step,
            gpus,
            product,
            ntt_piece,
            ntt_wide,
            gpu_schoolbook,
            ntt_lanes,
        }
    }
}

/// The number in environment variable `name` by `parse`; None when unset,
/// empty or not `what` (said on stderr, with what happens `otherwise`).
fn number(name: &str, parse: impl Fn(&str) -> Option<usize>, what: &str, otherwise: &str) -> Option<usize> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => {
            let parsed = parse(&v);
            if parsed.is_none() {
                eprintln!("cugmp: {name}={v:?} is not {what}; {otherwise}");
            }
            parsed
        }
        _ => None,
    }
}

/// "4096", "64K", "512M", "4G" (powers of 1024).
fn parse_bytes(v: &str) -> Option<usize> {
    let v = v.trim();
    let (digits, shift) = match v.as_bytes().last()?.to_ascii_uppercase() {
        b'K' => (&v[..v.len() - 1], 10),
        b'M' => (&v[..v.len() - 1], 20),
        b'G' => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    digits.trim().parse::<usize>().ok()?.checked_mul(1 << shift)
}

pub fn get() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(Config::from_env)
}

/// One line to stderr when `CUGMP_LOG=1`.
macro_rules! log {
    ($($arg:tt)*) => {
        if $crate::config::get().log {
            eprintln!("cugmp: {}", format_args!($($arg)*));
        }
    };
}
pub(crate) use log;

#[cfg(test)]
mod tests {
    #[test]
    fn byte_counts_parse() {
        assert_eq!(super::parse_bytes("4096"), Some(4096));
        assert_eq!(super::parse_bytes("64k"), Some(65536));
        assert_eq!(super::parse_bytes("3G"), Some(3 << 30));
        assert_eq!(super::parse_bytes("lots"), None);
        assert_eq!(super::parse_bytes("G"), None);
    }
}
