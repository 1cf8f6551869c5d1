//! Options for building a [`CuckooFilter`]: capacity, false-positive rate or
//! fingerprint width, hasher.

use std::hash::BuildHasher;

use crate::error::BuildError;
use crate::fingerprint::FingerprintBits;
use crate::hasher::DefaultHashBuilder;
use crate::table::MAX_BUCKETS;
use crate::CuckooFilter;

// The load factor a table is sized for is its layout's
// (`FingerprintBits::sizing_load_percent`): `with_capacity(n)` gives about
// `n / 0.94` slots for the plain and semi-sorted layouts, `n / 0.97` for the
// ranked ones. Below the load the filter reliably reaches, so
// that `n` distinct items fit (all but rarely in small tables, see
// [`slack`]). Integer arithmetic, so that [`capacity_for`] inverts
// [`buckets_for`] exactly. Rate bounds are taken one percent above it
// (`FingerprintBits::rated_load`).

/// Builds a [`CuckooFilter`]. Obtained from [`CuckooFilter::builder`].
///
/// The capacity is required: a fixed-size filter sized by accident would fail
/// its inserts later, far from the mistake. Everything else has a default:
/// 16-bit fingerprints, and the default hasher with a seed drawn at random for
/// each filter (see [`seed`](Builder::seed)).
///
/// ```
/// use lockfree_cuckoo_filter::{BuildError, CuckooFilter, FingerprintBits};
///
/// let f = CuckooFilter::builder()
///     .capacity(1_000_000)
///     .false_positive_rate(0.001)
///     .build()?;
/// assert!(f.capacity() >= 1_000_000);
/// assert_eq!(f.fingerprint_bits(), FingerprintBits::Ranked5);
///
/// assert_eq!(CuckooFilter::builder().build().unwrap_err(), BuildError::MissingCapacity);
/// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder<S = DefaultHashBuilder> {
    capacity: Option<usize>,
    false_positive_rate: Option<f64>,
    fingerprint_bits: Option<FingerprintBits>,
    hasher: S,
}

impl Default for Builder {
    /// No capacity yet (required), 16-bit fingerprints, and a randomly seeded
    /// [`DefaultHashBuilder`].
    fn default() -> Self {
        Self {
            capacity: None,
            false_positive_rate: None,
            fingerprint_bits: None,
            hasher: DefaultHashBuilder::new(),
        }
    }
}

impl Builder {
    /// Hash with the default hasher started from `seed`, instead of a seed
    /// drawn at random for this filter.
    ///
    /// Give a seed when filters must agree: to [`merge`](CuckooFilter::merge)
    /// two filters (build both with the same seed), or to compare a filter's
    /// [`to_bytes`](CuckooFilter::to_bytes) with another's, or to get the same
    /// filter from the same inserts on every run (tests). Otherwise leave the
    /// seed random: a filter that stores keys chosen by others (clients of a
    /// server) must keep its seed secret, or they can aim keys at one bucket
    /// pair or forge false positives; see [`DefaultHashBuilder`].
    /// Shorthand for `.hasher(DefaultHashBuilder::with_seed(seed))`.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    ///
    /// let a = CuckooFilter::builder().capacity(1000).seed(42).build()?;
    /// let b = CuckooFilter::builder().capacity(1000).seed(42).build()?;
    /// a.insert("apple")?;
    /// b.insert("pear")?;
    /// a.merge(&b)?;
    /// assert!(a.contains("apple") && a.contains("pear"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn seed(self, seed: u64) -> Self {
        self.hasher(DefaultHashBuilder::with_seed(seed))
    }
}

impl<S> Builder<S> {
    /// The number of distinct items the filter must accept (see
    /// [`CuckooFilter::capacity`] for how surely); required. The
    /// table gets about `capacity / 0.94` slots, not rounded to a power of
    /// two, and the filter's [`capacity`](CuckooFilter::capacity) is then at
    /// least this. 0 is allowed, and gives the smallest table (two buckets).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::CuckooFilter;
    /// let f = CuckooFilter::builder().capacity(1000).build()?;
    /// assert!(f.capacity() >= 1000);
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// The false-positive rate wanted at full load. Without
    /// [`fingerprint_bits`](Self::fingerprint_bits), picks, among all
    /// [layouts](FingerprintBits::ALL), the one with the least memory per
    /// item at the load it is sized for whose bound there
    /// ([`FingerprintBits::false_positive_rate`] at one percent above the
    /// sizing load: 0.95 for the plain and semi-sorted layouts, 0.98 for the
    /// ranked ones) meets it; with
    /// it, checks that the given width does. A smaller rate never gets
    /// fewer bits. `build` fails for a rate outside (0, 1) or unreachable.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.05).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Bits8);
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.02).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Bits9); // semi-sorted, 8 bits a slot
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.01).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Ranked7);
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.004).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Ranked6);
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
    ///     .capacity(1000)
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
    /// [`DefaultHashBuilder`] with a random seed, gives the same hash on every
    /// platform for the same seed (see [`seed`](Builder::seed)). Any
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
    ///     CuckooFilter::builder().capacity(100).false_positive_rate(f64::NAN).build(),
    ///     Err(BuildError::InvalidFalsePositiveRate { .. })
    /// ));
    /// assert_eq!(CuckooFilter::builder().build().unwrap_err(), BuildError::MissingCapacity);
    /// ```
    pub fn build(self) -> Result<CuckooFilter<S>, BuildError>
    where
        S: BuildHasher,
    {
        let capacity = self.capacity.ok_or(BuildError::MissingCapacity)?;
        let bits = self.choose_bits()?;
        let buckets = buckets_for(capacity, bits)?;
        CuckooFilter::from_parts(bits, buckets, self.hasher)
    }

    fn choose_bits(&self) -> Result<FingerprintBits, BuildError> {
        let Some(rate) = self.false_positive_rate else {
            return Ok(self.fingerprint_bits.unwrap_or_default());
        };
        if !(rate > 0.0 && rate < 1.0) {
            return Err(BuildError::InvalidFalsePositiveRate { rate });
        }
        let reaches = |bits: FingerprintBits| bits.false_positive_rate(bits.rated_load()) <= rate;
        match self.fingerprint_bits {
            Some(bits) if reaches(bits) => Ok(bits),
            Some(bits) => Err(unreachable_rate(rate, bits)),
            None => {
                cheapest(reaches).ok_or_else(|| unreachable_rate(rate, FingerprintBits::Bits32))
            }
        }
    }
}

/// The layout with the least table memory per item at its sizing load
/// ([`FingerprintBits::bits_per_item`]) among those that `meets`, ties going
/// to the one listed first in [`FingerprintBits::ALL`] (plain layouts, then
/// fewer words per bucket: the faster one). Since the layouts that meet a
/// rate include those that meet any smaller one, a smaller rate never gets
/// a cheaper layout.
pub(crate) fn cheapest(meets: impl Fn(FingerprintBits) -> bool) -> Option<FingerprintBits> {
    FingerprintBits::ALL
        .into_iter()
        .filter(|&b| meets(b))
        .min_by(|a, b| a.bits_per_item().total_cmp(&b.bits_per_item()))
}

fn unreachable_rate(rate: f64, bits: FingerprintBits) -> BuildError {
    BuildError::UnreachableFalsePositiveRate {
        rate,
        best: bits.false_positive_rate(bits.rated_load()),
        bits: bits.bits(),
    }
}

/// Buckets of `bits`' layout for `capacity` items: `capacity / (s · l)`
/// for buckets of `s` [slots](FingerprintBits::slots_per_bucket) sized for
/// load `l` (0.94, or 0.97 for the ranked layouts), rounded up,
/// plus a slack ([`slack`]) that keeps small tables from being unlucky and
/// costs large ones nothing (0.2 % at a million items), rounded up to even.
pub(crate) fn buckets_for(capacity: usize, bits: FingerprintBits) -> Result<u64, BuildError> {
    let too_large = BuildError::CapacityTooLarge { capacity };
    let base = base_buckets(capacity as u128, bits);
    if base >= u128::from(MAX_BUCKETS) {
        return Err(too_large);
    }
    let base = base as u64;
    // Even, and at least two: see `Table::alternate`.
    let buckets = (base + slack(base)).max(2).next_multiple_of(2);
    if buckets > MAX_BUCKETS {
        return Err(too_large);
    }
    Ok(buckets)
}

/// The buckets added to `base`: its square root, and two more beyond the
/// smallest table.
///
/// Inserts fail before a table is full when more items pick some set of
/// buckets than its slots hold: most likely, nine items one bucket pair. In a
/// table of a few buckets that happens at the sizing load: with the square
/// root alone, one in 2000 tables of four buckets (capacity 11, random seeds)
/// refused an insert before its capacity, and one in 10 000 of ten buckets.
/// The two more buckets make the table for 11 items one of six buckets, whose
/// nine pairs take the eleven items with a probability of refusing one of
/// about 10^-6 (figures for buckets of four; buckets of five and six hold
/// their items' pairs with more room). The smallest table, two buckets (a
/// base of 0 or 1), is one pair of eight to twelve slots that its capacity
/// (three to five) always fits.
fn slack(base: u64) -> u64 {
    base.isqrt() + if base >= 2 { 2 } else { 0 }
}

/// `ceil(capacity / (slots · load))` for `bits`' slots per bucket and
/// sizing load, exactly.
fn base_buckets(capacity: u128, bits: FingerprintBits) -> u128 {
    let slots = u128::from(bits.slots_per_bucket());
    (capacity * 100).div_ceil(slots * u128::from(bits.sizing_load_percent()))
}

/// The capacity in items of a table of `buckets` buckets of `bits`' layout:
/// the largest `n` for which [`buckets_for`]`(n, bits)` is at most
/// `buckets`, so at least the capacity a table of this size was built for,
/// and what `with_capacity` promises for a table of this size. (Saturates
/// at `usize::MAX` where `usize` is narrower than the answer.)
pub(crate) fn capacity_for(buckets: u64, bits: FingerprintBits) -> usize {
    // The largest base with `base + slack(base) <= buckets` (the rounding to
    // even cannot push an even `buckets` over): the sum is increasing in base.
    // A table too small for any base (two buckets) holds what a base of 0
    // asks for, and its one pair of eight slots takes it.
    let (mut low, mut high) = (0u64, buckets);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if mid + slack(mid) <= buckets {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    // The largest n with base_buckets(n) <= low.
    let slots = u128::from(bits.slots_per_bucket());
    let n = u128::from(low) * slots * u128::from(bits.sizing_load_percent()) / 100;
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_pick_the_cheapest_layout() {
        // The rates of the README's table and the layouts they need: pure
        // arithmetic on the bounds at load 0.95.
        let pick = |r: f64| Builder::default().false_positive_rate(r).choose_bits();
        for (rate, bits) in [
            (0.03, FingerprintBits::Bits8),
            (0.02, FingerprintBits::Bits9),
            (0.012, FingerprintBits::Ranked7),
            (0.01, FingerprintBits::Ranked7),
            (0.0042, FingerprintBits::Ranked6),
            (0.002, FingerprintBits::Ranked5),
            (6e-4, FingerprintBits::Ranked5),
            (5e-4, FingerprintBits::Bits16),
            (1e-4, FingerprintBits::Bits17),
            (1e-5, FingerprintBits::Bits21),
            (1e-6, FingerprintBits::Bits32),
        ] {
            assert_eq!(pick(rate), Ok(bits), "{rate}");
        }
        // Forcing a width still forces it, and is checked.
        let forced = |r: f64, b| {
            Builder::default()
                .false_positive_rate(r)
                .fingerprint_bits(b)
                .choose_bits()
        };
        assert_eq!(
            forced(0.03, FingerprintBits::Bits16),
            Ok(FingerprintBits::Bits16)
        );
        assert!(matches!(
            forced(0.002, FingerprintBits::Bits10),
            Err(BuildError::UnreachableFalsePositiveRate { bits: 10, .. })
        ));
        // The cheapest in memory; of equal cost, the faster (plain) one.
        assert_eq!(cheapest(|b| b.bits() >= 8), Some(FingerprintBits::Bits8));
        assert_eq!(cheapest(|b| b.bits() >= 9), Some(FingerprintBits::Bits9));
        assert_eq!(cheapest(|b| b.bits() >= 12), Some(FingerprintBits::Ranked6));
        assert_eq!(
            cheapest(|b| b.bits() >= 12 && !b.is_ranked()),
            Some(FingerprintBits::Bits12)
        );
        assert_eq!(cheapest(|b| b.bits() >= 16), Some(FingerprintBits::Bits16));
        assert_eq!(cheapest(|b| b.bits() >= 17), Some(FingerprintBits::Bits17));
        assert_eq!(cheapest(|_| false), None);
    }

    #[test]
    fn rates_pick_the_shortest_width() {
        let pick = |r: f64| Builder::default().false_positive_rate(r).choose_bits();
        assert_eq!(pick(0.05), Ok(FingerprintBits::Bits8));
        assert_eq!(pick(0.03), Ok(FingerprintBits::Bits8));
        assert_eq!(pick(0.02), Ok(FingerprintBits::Bits9));
        assert_eq!(pick(0.012), Ok(FingerprintBits::Ranked7));
        assert_eq!(pick(0.01), Ok(FingerprintBits::Ranked7));
        assert_eq!(pick(1e-4), Ok(FingerprintBits::Bits17));
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
    fn a_smaller_rate_never_gets_fewer_bits() {
        let pick = |r: f64| Builder::default().false_positive_rate(r).choose_bits();
        let mut last = 0.0;
        for i in (-90 * 20..=-10 * 20).rev() {
            let rate = 10f64.powf(f64::from(i) / 200.0);
            let Ok(bits) = pick(rate) else { break };
            assert!(bits.bits_per_item() >= last, "{rate}: {bits:?}");
            assert!(bits.false_positive_rate(bits.rated_load()) <= rate);
            last = bits.bits_per_item();
        }
    }

    #[test]
    fn sizing_is_tight_for_large_and_generous_for_tiny() {
        use FingerprintBits::Bits16 as B16;
        assert_eq!(buckets_for(0, B16), Ok(2));
        assert_eq!(buckets_for(1, B16), Ok(2));
        assert_eq!(buckets_for(3, B16), Ok(2));
        assert_eq!(buckets_for(100, B16).map(|b| b % 2), Ok(0));
        for bits in FingerprintBits::ALL {
            let per_bucket = u64::from(bits.slots_per_bucket());
            for n in [1_000_000usize, 10_000_000, 100_000_000] {
                let slots = buckets_for(n, bits).unwrap() * per_bucket;
                // The sizing load, and one percent above it.
                let load = bits.sizing_load_percent() as f64 / 100.0;
                let ideal = n as f64 / (load + 0.01);
                assert!(slots as f64 >= n as f64 / load);
                assert!((slots as f64) < ideal * 1.10, "{n}: {slots} slots");
            }
        }
        assert!(matches!(
            buckets_for(usize::MAX, B16),
            Err(BuildError::CapacityTooLarge { .. })
        ));
        assert!(buckets_for(16_000_000_000, B16).is_ok());
        assert!(buckets_for(17_000_000_000, B16).is_err());
        assert!(buckets_for(24_000_000_000, FingerprintBits::Bits10).is_ok());
        assert_eq!(buckets_for(10_000_000, B16), Ok(10_644_832 / 4));
        assert_eq!(
            buckets_for(10_000_000, FingerprintBits::Bits12),
            Ok(2_129_120)
        );
    }

    #[test]
    fn capacity_inverts_the_sizing() {
        // Every capacity fits in the table built for it, and the capacity of
        // that table is the largest that would be built that small.
        for bits in FingerprintBits::ALL {
            let check = |n: usize| {
                let buckets = buckets_for(n, bits).unwrap();
                let cap = capacity_for(buckets, bits);
                assert!(cap >= n, "{n}: capacity {cap}");
                assert_eq!(buckets_for(cap, bits), Ok(buckets), "{n}");
                assert!(buckets_for(cap + 1, bits).unwrap() > buckets, "{n}");
            };
            for n in (0..5000).chain([94, 376, 37_600, 1_000_000, 10_000_000, 123_456_789]) {
                check(n);
            }
            let largest = capacity_for(MAX_BUCKETS, bits);
            assert_eq!(buckets_for(largest, bits), Ok(MAX_BUCKETS));
            // An unproduced bucket count (a decoded table) gets the capacity
            // of the largest table that fits in it.
            assert_eq!(capacity_for(4, bits), capacity_for(2, bits));
        }
        use FingerprintBits::Bits16 as B16;
        assert_eq!(
            capacity_for(buckets_for(10_000_000, B16).unwrap(), B16),
            10_000_005
        );
        assert_eq!(capacity_for(2, B16), 3);
        // Four buckets are never built (a base of 2 gets six), and hold 3.
        assert_eq!(capacity_for(4, B16), 3);
        assert_eq!(capacity_for(6, B16), 11);
        assert_eq!(buckets_for(4, B16), Ok(6));
        // Two buckets of six slots take five items.
        assert_eq!(capacity_for(2, FingerprintBits::Bits10), 5);
    }

    #[test]
    fn a_capacity_is_required_and_a_seed_reproduces() {
        assert_eq!(
            Builder::default().build().unwrap_err(),
            BuildError::MissingCapacity
        );
        let a = Builder::default().capacity(10).seed(7).build().unwrap();
        let b = Builder::default().capacity(10).seed(7).build().unwrap();
        assert_eq!(a.hasher(), b.hasher());
        let c = Builder::default().capacity(10).build().unwrap();
        let d = Builder::default().capacity(10).build().unwrap();
        assert_ne!(c.hasher(), d.hasher(), "default seeds are drawn per filter");
    }
}
