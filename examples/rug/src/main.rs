//! 3^2000000 * (3^2000000 + 1) with rug, on whatever libgmp.so.10 the
//! dynamic loader finds: the digit count, a checksum, and the time.
use rug::ops::Pow;
use rug::Integer;
use std::time::Instant;

fn main() {
    let x = Integer::from(3).pow(2_000_000u32);
    let t = Instant::now();
    let y = Integer::from(&x * Integer::from(&x + 1));
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let digits = y.to_string();
    let checksum = digits.bytes().fold(0u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    println!("digits={} checksum={checksum:016x} product_ms={ms:.1}", digits.len());
}
