//! Options for building a [`CuckooFilter`]: capacity, false-positive rate or
//! fingerprint width, hasher.

use std::hash::BuildHasher;

use crate::error::BuildError;
use crate::fingerprint::FingerprintBits;
use crate::hasher::DefaultHashBuilder;
use crate::table::{MAX_BUCKETS, SLOTS};
use crate::CuckooFilter;

/// The load factor the table is sized for: `with_capacity(n)` gives about
/// `n / SIZING_LOAD` slots. Below the load the filter reliably reaches (over 95 %)
/// so that `n` distinct items always fit, and within 10 % of `n / 0.95`.
const SIZING_LOAD: f64 = 0.94;

/// The load at which [`FingerprintBits::false_positive_rate`] bounds are taken
/// when choosing a width for a requested rate: a full table.
const FULL_LOAD: f64 = 0.95;

/// Builds a [`CuckooFilter`]. Obtained from [`CuckooFilter::builder`].
///
/// ```
/// use lockfree_cuckoo_filter::CuckooFilter;
///
/// let f = CuckooFilter::builder()
///     .capacity(1_000_000)
///     .false_positive_rate(0.001)
///     .build()?;
/// assert!(f.capacity() >= 1_000_000);
/// assert_eq!(f.fingerprint_bits().bits(), 16);
/// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<S = DefaultHashBuilder> {
    capacity: usize,
    false_positive_rate: Option<f64>,
    fingerprint_bits: Option<FingerprintBits>,
    hasher: S,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            capacity: 0,
            false_positive_rate: None,
            fingerprint_bits: None,
            hasher: DefaultHashBuilder::default(),
        }
    }
}

impl<S> Builder<S> {
    /// The number of distinct items the filter must accept (default 0). The
    /// table gets about `capacity / 0.94` slots, not rounded to a power of two.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::builder().capacity(1000).build()?;
    /// assert!(f.capacity() >= 1000);
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// The false-positive rate wanted at full load. Without
    /// [`fingerprint_bits`](Self::fingerprint_bits), picks the shortest
    /// fingerprint (8, 16 or 32 bits) that reaches it; with it, checks that the
    /// given width does. `build` fails for a rate outside (0, 1) or unreachable.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.05).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Bits8);
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(1e-6).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Bits32);
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.false_positive_rate = Some(rate);
        self
    }

    /// The fingerprint width (default [`FingerprintBits::Bits16`], or the one
    /// [`false_positive_rate`](Self::false_positive_rate) picks).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, CuckooFilter, FingerprintBits};
    /// let err = CuckooFilter::builder()
    ///     .fingerprint_bits(FingerprintBits::Bits8)
    ///     .false_positive_rate(0.001)
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(err, BuildError::UnreachableFalsePositiveRate { bits: 8, .. }));
    /// ```
    pub fn fingerprint_bits(mut self, bits: FingerprintBits) -> Self {
        self.fingerprint_bits = Some(bits);
        self
    }

    /// The hasher items are hashed with. The default,
    /// [`DefaultHashBuilder`], gives the same hash on every platform. Any
    /// [`BuildHasher`] works for a filter that lives in one process; to save it
    /// with [`to_bytes`](CuckooFilter::to_bytes) the hasher must also name
    /// itself through [`HasherIdentity`](crate::HasherIdentity), which a
    /// randomly keyed hasher such as `std`'s `RandomState` cannot.
    ///
    /// ```
    /// use std::collections::hash_map::RandomState;
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::builder().capacity(10).hasher(RandomState::new()).build()?;
    /// f.insert("x")?;
    /// assert!(f.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> Builder<T> {
        Builder {
            capacity: self.capacity,
            false_positive_rate: self.false_positive_rate,
            fingerprint_bits: self.fingerprint_bits,
            hasher,
        }
    }

    /// Builds the filter, or says which option is impossible.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, CuckooFilter};
    /// assert!(CuckooFilter::builder().capacity(100).build().is_ok());
    /// assert!(matches!(
    ///     CuckooFilter::builder().false_positive_rate(f64::NAN).build(),
    ///     Err(BuildError::InvalidFalsePositiveRate { .. })
    /// ));
    /// ```
    pub fn build(self) -> Result<CuckooFilter<S>, BuildError>
    where
        S: BuildHasher,
    {
        let bits = self.choose_bits()?;
        let buckets = buckets_for(self.capacity)?;
        CuckooFilter::from_parts(bits, buckets, self.hasher)
    }

    fn choose_bits(&self) -> Result<FingerprintBits, BuildError> {
        let Some(rate) = self.false_positive_rate else {
            return Ok(self.fingerprint_bits.unwrap_or_default());
        };
        if !(rate > 0.0 && rate < 1.0) {
            return Err(BuildError::InvalidFalsePositiveRate { rate });
        }
        let reaches = |bits: FingerprintBits| bits.false_positive_rate(FULL_LOAD) <= rate;
        match self.fingerprint_bits {
            Some(bits) if reaches(bits) => Ok(bits),
            Some(bits) => Err(unreachable_rate(rate, bits)),
            None => FingerprintBits::ALL
                .into_iter()
                .find(|&b| reaches(b))
                .ok_or_else(|| unreachable_rate(rate, FingerprintBits::Bits32)),
        }
    }
}

fn unreachable_rate(rate: f64, bits: FingerprintBits) -> BuildError {
    BuildError::UnreachableFalsePositiveRate {
        rate,
        best: bits.false_positive_rate(FULL_LOAD),
        bits: bits.bits(),
    }
}

/// Buckets for `capacity` items: `capacity / (4 · SIZING_LOAD)`, plus a slack
/// of its square root that keeps tiny tables from being unlucky and costs large
/// ones nothing (0.2 % at a million items), rounded up to even.
pub(crate) fn buckets_for(capacity: usize) -> Result<u64, BuildError> {
    let too_large = BuildError::CapacityTooLarge { capacity };
    let base = (capacity as f64 / (f64::from(SLOTS) * SIZING_LOAD)).ceil();
    if base >= MAX_BUCKETS as f64 {
        return Err(too_large);
    }
    let base = base as u64;
    // Even, and at least two: see `Table::alternate`.
    let buckets = (base + base.isqrt()).max(2).next_multiple_of(2);
    if buckets > MAX_BUCKETS {
        return Err(too_large);
    }
    Ok(buckets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_pick_the_shortest_width() {
        let pick = |r: f64| Builder::default().false_positive_rate(r).choose_bits();
        assert_eq!(pick(0.05), Ok(FingerprintBits::Bits8));
        assert_eq!(pick(0.03), Ok(FingerprintBits::Bits8));
        assert_eq!(pick(0.02), Ok(FingerprintBits::Bits16));
        assert_eq!(pick(1e-4), Ok(FingerprintBits::Bits32));
        assert_eq!(pick(2e-9), Ok(FingerprintBits::Bits32));
        assert!(matches!(
            pick(1e-10),
            Err(BuildError::UnreachableFalsePositiveRate { bits: 32, .. })
        ));
        for bad in [
            0.0,
            1.0,
            -0.1,
            2.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert!(
                matches!(pick(bad), Err(BuildError::InvalidFalsePositiveRate { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn sizing_is_tight_for_large_and_generous_for_tiny() {
        assert_eq!(buckets_for(0), Ok(2));
        assert_eq!(buckets_for(1), Ok(2));
        assert_eq!(buckets_for(100).map(|b| b % 2), Ok(0));
        for n in [1_000_000usize, 10_000_000, 100_000_000] {
            let slots = buckets_for(n).unwrap() * 4;
            let ideal = n as f64 / 0.95;
            assert!(slots as f64 >= n as f64 / 0.95);
            assert!((slots as f64) < ideal * 1.10, "{n}: {slots} slots");
        }
        assert!(matches!(
            buckets_for(usize::MAX),
            Err(BuildError::CapacityTooLarge { .. })
        ));
        assert!(buckets_for(16_000_000_000).is_ok());
        assert!(buckets_for(17_000_000_000).is_err());
    }
}
