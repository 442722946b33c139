//! Retry delays: a pure function with the jitter passed in, so tests can
//! assert exact sequences (as smithy-rs does).

/// Bounded exponential backoff with "equal jitter": the delay before retry
/// `attempt` (1-based) is `d/2 + jitter·d/2` with `d = min(max, base·2^(attempt-1))`,
/// `jitter` in `[0, 1]`. Saturates instead of overflowing.
pub fn backoff_ms(attempt: u32, base_ms: u64, max_ms: u64, jitter: f64) -> u64 {
    let exp = attempt.saturating_sub(1).min(63);
    let d = base_ms.saturating_mul(1u64 << exp).min(max_ms);
    let jitter = if jitter.is_finite() {
        jitter.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let half = d / 2;
    half + ((d - half) as f64 * jitter) as u64
}

/// A tiny deterministic generator for jitter (seeded by the driver from
/// `crypto.getRandomValues`, by tests from a constant).
#[derive(Clone, Debug)]
pub(crate) struct Jitter(u64);

impl Jitter {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Jitter {
        Jitter(seed)
    }

    /// The next value in `[0, 1)`.
    pub(crate) fn sample(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    #[test]
    fn exact_sequences_at_the_jitter_extremes() {
        let low: Vec<u64> = (1..=6).map(|n| backoff_ms(n, 100, 2_000, 0.0)).collect();
        assert_eq!(low, [50, 100, 200, 400, 800, 1_000]);
        let high: Vec<u64> = (1..=6).map(|n| backoff_ms(n, 100, 2_000, 1.0)).collect();
        assert_eq!(high, [100, 200, 400, 800, 1_600, 2_000]);
        assert_eq!(backoff_ms(3, 100, 2_000, 0.5), 300);
    }

    #[test]
    fn never_overflows_and_ignores_bad_jitter() {
        assert_eq!(backoff_ms(u32::MAX, u64::MAX, u64::MAX, 1.0), u64::MAX);
        assert_eq!(backoff_ms(200, 1_000, 30_000, 1.0), 30_000);
        assert_eq!(backoff_ms(0, 100, 1_000, 1.0), 100);
        assert_eq!(backoff_ms(1, 100, 1_000, f64::NAN), 50);
        assert_eq!(backoff_ms(1, 100, 1_000, 7.0), 100);
    }

    #[test]
    fn jitter_is_in_range_and_replays() {
        let mut a = Jitter::new(3);
        let mut b = Jitter::new(3);
        for _ in 0..1000 {
            let x = a.sample();
            assert!((0.0..1.0).contains(&x));
            assert_eq!(x, b.sample());
        }
    }
}
