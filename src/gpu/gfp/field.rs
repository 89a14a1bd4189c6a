//! Arithmetic modulo the generalized Fermat prime p = r^8 + 1, r = 2^61 +
//! 2^41 (489 bits; prime, and p - 1 = r^8 = 2^328 (2^20 + 1)^8, so roots of
//! unity of every order 2^k up to 2^328 exist). The same steps as
//! cuda/gfp.cu, so that the host builds the root tables the kernels use and
//! the tests run the kernels' arithmetic on the CPU.
//!
//! An element is eight signed digits in base r, x = sum d_i r^i mod p, each
//! |d_i| <= r/2 + 3 once normalised. Because r^8 = -1, multiplying by a power
//! of r moves digits up and negates those that wrap: r is a primitive 16th
//! root of unity whose products cost no multiplication, which is the whole
//! point of the prime. Why r near 2^61 and not 2^63 (the paper's example
//! r = 2^63 + 2^34): the butterflies add digits without carrying, and a
//! product's column of eight digit products must fit a signed 128-bit
//! word; with |d_i| <= 2^60 both have room, and r^8 + 1 is prime for this
//! r (checked by the tests against GMP).
//!
//! It touches nothing but its own types; the engine (`super`) and the tests
//! use it.

/// Digits of an element.
pub(crate) const K: usize = 8;
/// The base: r = 2^61 + 2^41.
pub(crate) const R: i64 = (1 << 61) + (1 << 41);
/// Normalised digits lie in [-HALF - 3, HALF + 3].
pub(crate) const HALF: i64 = R / 2;
/// r^8 = 2^(8 * 41) * (2^20 + 1)^8: the two-power part of p - 1.
pub(crate) const TWO_ADICITY: u32 = 8 * 41;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Elem(pub(crate) [i64; K]);

/// (q, m) with t = q r + m and |m| <= r/2, for |t| < 2^63 - 2^61: q is
/// t / 2^61 to the nearest integer, within 4 of the quotient, so
/// |t - q r| <= 2^60 + 2^43 and one step ends it (r's two bits make q r two
/// shifts; wrapping arithmetic, as only the result need fit).
fn quotient_small(t: i64) -> (i64, i64) {
    let mut q = ((t >> 60) + 1) >> 1;
    let mut m = (t as u64).wrapping_sub((q as u64) << 61).wrapping_sub((q as u64) << 41) as i64;
    if m > HALF {
        q += 1;
        m -= R;
    } else if m < -HALF {
        q -= 1;
        m += R;
    }
    (q, m)
}

/// The same for |t| < 2^124: t / r = (t / 2^61) / (1 + 2^-20) to within a
/// few units from shifts, the remainder one step nearer, then
/// `quotient_small`.
fn quotient(t: i128) -> (i64, i64) {
    let q1 = (t >> 61) as i64;
    let q = q1 - (q1 >> 20) + (q1 >> 40) - (q1 >> 60);
    let m = t - ((q as i128) << 61) - ((q as i128) << 41);
    let e = (m >> 61) as i64;
    let (q2, rem) = quotient_small((m as u64).wrapping_sub((e as u64) << 61).wrapping_sub((e as u64) << 41) as i64);
    (q + e + q2, rem)
}

/// The carry out of the top, c r^8 = -c, back in at the bottom: c = h r + l
/// goes in as -l at digit 0 and -h at digit 1, then digit 0's carry.
fn fold(d: &mut [i64; K], c: i64) {
    let (h, l) = quotient_small(c);
    let (q, m) = quotient_small(d[0] - l);
    d[0] = m;
    d[1] += q - h;
}

/// The element sum z_i r^i, |z_i| < 2^123, normalised (|digits| <= r/2 + 3):
/// one carry pass, and its carry out of the top folded back in.
pub(crate) fn normalize(z: [i128; K]) -> Elem {
    let mut d = [0i64; K];
    let mut c = 0i64;
    for s in 0..K {
        let (q, m) = quotient(z[s] + c as i128);
        d[s] = m;
        c = q;
    }
    fold(&mut d, c);
    Elem(d)
}

impl Elem {
    #[cfg(test)]
    pub(crate) const ZERO: Elem = Elem([0; K]);
    pub(crate) const ONE: Elem = Elem([1, 0, 0, 0, 0, 0, 0, 0]);

    /// r^e, 0 <= e < 16.
    pub(crate) fn r_pow(e: usize) -> Elem {
        Elem::ONE.times_r_pow(e)
    }

    #[cfg(test)]
    /// A value below 2^192 (three limbs, low first).
    pub(crate) fn from_limbs(l: [u64; 3]) -> Elem {
        // Horner's rule in 32-bit steps, so that a digit times 2^32 stays
        // far below 2^123.
        let mut x = Elem::ZERO;
        for w in (0..6).rev() {
            let word = (l[w / 2] >> (32 * (w % 2))) as u32;
            let mut z = x.0.map(|d| (d as i128) << 32);
            z[0] += word as i128;
            x = normalize(z);
        }
        x
    }

    #[cfg(test)]
    pub(crate) fn add(&self, y: &Elem) -> Elem {
        normalize(std::array::from_fn(|i| self.0[i] as i128 + y.0[i] as i128))
    }

    #[cfg(test)]
    pub(crate) fn sub(&self, y: &Elem) -> Elem {
        normalize(std::array::from_fn(|i| self.0[i] as i128 - y.0[i] as i128))
    }

    /// x r^e, 0 <= e < 16: digits moved up e places, those that pass the
    /// top negated; no carries.
    pub(crate) fn times_r_pow(&self, e: usize) -> Elem {
        let (negate, e) = if e >= K { (true, e - K) } else { (false, e) };
        let mut y = [0i64; K];
        for (i, &d) in self.0.iter().enumerate() {
            let j = i + e;
            let d = if negate { -d } else { d };
            if j < K {
                y[j] = d;
            } else {
                y[j - K] = -d;
            }
        }
        Elem(y)
    }

    /// The product: 64 digit products in eight signed 128-bit columns, the
    /// eight above the top folded back negated.
    pub(crate) fn mul(&self, y: &Elem) -> Elem {
        let mut z = [0i128; K];
        for i in 0..K {
            for j in 0..K {
                let p = self.0[i] as i128 * y.0[j] as i128;
                if i + j < K {
                    z[i + j] += p;
                } else {
                    z[i + j - K] -= p;
                }
            }
        }
        normalize(z)
    }

    /// x^(2^k).
    pub(crate) fn square_times(&self, k: u32) -> Elem {
        (0..k).fold(*self, |x, _| x.mul(&x))
    }

    /// The value in [0, p) as nine limbs, low first.
    pub(crate) fn canonical(&self) -> [u64; K + 1] {
        let (mut pos, mut neg) = ([0u64; K + 1], [0u64; K + 1]);
        for &d in self.0.iter().rev() {
            times_r_plus(&mut pos, d.max(0) as u64);
            times_r_plus(&mut neg, (-d).max(0) as u64);
        }
        match sub_limbs(&pos, &neg) {
            Some(v) => v,
            None => sub_limbs(&modulus(), &sub_limbs(&neg, &pos).unwrap_or_default()).unwrap_or_default(),
        }
    }
}

/// x = x r + a, on nine limbs (no overflow for the values here: below
/// (r/2 + 3) (r^8 - 1) / (r - 1) < 2^489).
fn times_r_plus(x: &mut [u64; K + 1], a: u64) {
    let mut carry = a as u128;
    for limb in x.iter_mut() {
        let t = *limb as u128 * R as u128 + carry;
        *limb = t as u64;
        carry = t >> 64;
    }
}

/// x - y, or None if y > x.
fn sub_limbs(x: &[u64; K + 1], y: &[u64; K + 1]) -> Option<[u64; K + 1]> {
    let mut out = [0u64; K + 1];
    let mut borrow = false;
    for i in 0..=K {
        let (d, b1) = x[i].overflowing_sub(y[i]);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        out[i] = d;
        borrow = b1 || b2;
    }
    (!borrow).then_some(out)
}

/// p = r^8 + 1 as nine limbs.
pub(crate) fn modulus() -> [u64; K + 1] {
    let mut p = [0u64; K + 1];
    p[0] = 1;
    for _ in 0..K {
        times_r_plus(&mut p, 0);
    }
    p[0] += 1;
    p
}

/// A primitive 2^log_n-th root of unity w (2 <= log_n <= 40) whose power
/// 2^(log_n - 2) is r^4, so that the transform's radix-4 butterflies
/// multiply by r^4 (a move of digits) where a DFT of four points multiplies
/// by its fourth root of unity.
pub(crate) fn root_of_unity(log_n: u32) -> Elem {
    assert!((2..=40).contains(&log_n), "transform lengths 2^2 to 2^40");
    let minus_one = Elem([-1, 0, 0, 0, 0, 0, 0, 0]).canonical();
    // g^((p - 1) / 2^328) for the first g that is not a square: a
    // primitive 2^328-th root of unity (its 2^327-th power is -1).
    let primitive = (3..)
        .map(|g| {
            let x = Elem([g, 0, 0, 0, 0, 0, 0, 0]);
            // x^((2^20 + 1)^8): eight times y -> y^(2^20) y.
            (0..8).fold(x, |y, _| y.square_times(20).mul(&y))
        })
        .find(|h| h.square_times(TWO_ADICITY - 1).canonical() == minus_one)
        .unwrap_or(Elem::ONE);
    let w = primitive.square_times(TWO_ADICITY - log_n);
    // w^(2^(log_n - 2)) is r^4 or r^12 = -r^4; in the second case w^-1 =
    // w^(2^log_n - 1) has the first.
    if w.square_times(log_n - 2).canonical() == Elem::r_pow(4).canonical() {
        w
    } else {
        (0..log_n).fold(Elem::ONE, |acc, k| acc.mul(&w.square_times(k)))
    }
}
