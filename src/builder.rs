//! Options for building a [`CuckooFilter`]: capacity, false-positive rate or
//! fingerprint width, hasher.

use std::hash::BuildHasher;

use crate::error::BuildError;
use crate::fingerprint::FingerprintBits;
use crate::hasher::DefaultHashBuilder;
use crate::table::MAX_BUCKETS;
use crate::CuckooFilter;

// A table is sized for a load, in thousandths. Without a rate, its
// layout's (`FingerprintBits::full_load`), so that `with_capacity(n)` gives
// about `n / 0.94` slots for the plain and semi-sorted layouts, `n / 0.97`
// for the ranked ones (`n / 0.91` for the ranked three-slot one): well below the load the filter reliably reaches, so
// that `n` distinct items fit (all but rarely in small tables, see
// [`slack`]) with room to spare. A rate asked sizes for the fewest bits
// that meet it: as high as the layout's `FingerprintBits::max_load`
// (closer to the first refused insert), or lower (down to [`MIN_LOAD`]):
// its buckets then hold fewer fingerprints at the capacity, a lower rate
// for more bits, which is cheaper than the next layout up between two
// layouts' rates (see [`cheapest`]). The filter keeps the load it was sized
// for, and its capacity follows from it and the bucket count.
// Integer arithmetic, so that [`capacity_at`] inverts [`buckets_at`]
// exactly. Rate bounds are taken one percent above the load
// (`FingerprintBits::rated_load`).

/// The lowest load, in thousandths, a table is sized for. Below it no
/// layout costs fewer bits than the next layout up at its full load.
pub(crate) const MIN_LOAD: u32 = 500;

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
    /// table gets about `capacity / 0.94` slots (`capacity / 0.97` for the
    /// ranked layouts, `capacity / 0.91` for the ranked three-slot one, and
    /// more where a
    /// [`false_positive_rate`](Self::false_positive_rate) sizes the layout
    /// for a lower load), not rounded to a power of two, and the filter's
    /// [`capacity`](CuckooFilter::capacity) is then at least this. 0 is allowed, and gives the smallest table (two buckets).
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

    /// The false-positive rate wanted at full load, that is with the
    /// filter's [`capacity`](CuckooFilter::capacity) in it. Without
    /// [`fingerprint_bits`](Self::fingerprint_bits), picks, among all
    /// [layouts](FingerprintBits::ALL) and the loads a table of each can be
    /// sized for, the one with the least table memory per item whose bound
    /// ([`FingerprintBits::false_positive_rate`] at one percent above the
    /// load sized for) meets it. A layout is sized for the highest load the
    /// builder takes it to where that meets the rate: 94 % at 8 and 9 bits,
    /// 95.5 % for buckets of four, up to 98 % for the ranked buckets of six
    /// and seven, each a percent or more below the load where the layout
    /// first refuses an insert (with no rate, the builder keeps 94 %, or 97 %
    /// for the ranked layouts, 91 % for the ranked three-slot one). Where only a lower load meets the rate, it
    /// is sized for that: fewer fingerprints per bucket pair at the
    /// capacity, more bits per item, and still fewer than the next layout
    /// up (5·10⁻⁴ takes the ranked five-slot layout sized for 80.9 %, 15.8
    /// table bits per item, where 16-bit fingerprints take 16.8). With
    /// `fingerprint_bits`, sizes the given layout for the highest load at
    /// which it meets the rate, down to 50 %. A smaller rate never gets
    /// fewer bits. `build` fails for a rate outside (0, 1) or unreachable.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits};
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.05).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Ranked8); // 8 bits a slot, 97 %
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.02).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Bits9); // semi-sorted, 8 bits a slot
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.01).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Ranked7);
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(0.004).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Ranked6);
    /// // Ranked five-slot buckets sized for a lower load: more slots for the
    /// // same capacity than at 0.001.
    /// let low = CuckooFilter::builder().capacity(100_000).false_positive_rate(5e-4).build()?;
    /// let full = CuckooFilter::builder().capacity(100_000).false_positive_rate(0.001).build()?;
    /// assert_eq!(low.fingerprint_bits(), FingerprintBits::Ranked5);
    /// assert_eq!(full.fingerprint_bits(), FingerprintBits::Ranked5);
    /// assert!(low.slots() > full.slots() * 11 / 10);
    /// assert!(low.capacity() >= 100_000 && low.capacity() < 100_100);
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(2e-6).build()?;
    /// assert_eq!(f.fingerprint_bits(), FingerprintBits::Ranked3);
    /// let f = CuckooFilter::builder().capacity(10).false_positive_rate(1e-7).build()?;
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
        let (bits, load) = self.choose()?;
        let buckets = buckets_at(capacity, bits, load)?;
        CuckooFilter::from_parts(bits, buckets, load, self.hasher)
    }

    /// The layout and the load, in thousandths, to size it for.
    fn choose(&self) -> Result<(FingerprintBits, u32), BuildError> {
        let Some(rate) = self.false_positive_rate else {
            let bits = self.fingerprint_bits.unwrap_or_default();
            return Ok((bits, bits.full_load()));
        };
        if !(rate > 0.0 && rate < 1.0) {
            return Err(BuildError::InvalidFalsePositiveRate { rate });
        }
        match self.fingerprint_bits {
            Some(bits) => highest_load(bits, rate)
                .map(|load| (bits, load))
                .ok_or_else(|| unreachable_rate(rate, bits)),
            None => cheapest(rate).ok_or_else(|| unreachable_rate(rate, FingerprintBits::Bits32)),
        }
    }
}

/// The highest load, in thousandths, from [`MIN_LOAD`] to `bits`'
/// [`max_load`](FingerprintBits::max_load), at which a table of `bits`' layout meets `rate`: its bound one
/// percent above that load is at most `rate`. `None` if none does.
pub(crate) fn highest_load(bits: FingerprintBits, rate: f64) -> Option<u32> {
    let meets = |load: u32| bits.false_positive_rate(FingerprintBits::rated_load(load)) <= rate;
    if !meets(MIN_LOAD) {
        return None;
    }
    // The bound rises with the load: the last load that meets it.
    let (mut low, mut high) = (MIN_LOAD, bits.max_load());
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if meets(mid) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    Some(low)
}

/// The layout, and the load to size it for, with the least table memory
/// per item ([`FingerprintBits::bits_per_item`]) that meets `rate`: each
/// layout at its [`highest_load`] for the rate, ties going to the one
/// listed first in [`FingerprintBits::ALL`] (plain layouts, then fewer
/// words per bucket: the faster one). A smaller rate lowers each layout's
/// highest load (or rules the layout out), so it never gets fewer bits.
pub(crate) fn cheapest(rate: f64) -> Option<(FingerprintBits, u32)> {
    FingerprintBits::ALL
        .into_iter()
        .filter_map(|bits| highest_load(bits, rate).map(|load| (bits, load)))
        .min_by(|&(a, la), &(b, lb)| a.bits_per_item(la).total_cmp(&b.bits_per_item(lb)))
}

fn unreachable_rate(rate: f64, bits: FingerprintBits) -> BuildError {
    BuildError::UnreachableFalsePositiveRate {
        rate,
        best: bits.false_positive_rate(FingerprintBits::rated_load(MIN_LOAD)),
        bits: bits.bits(),
    }
}

/// [`buckets_at`] the layout's full load (0.94, or 0.97 for the ranked
/// layouts, 0.91 for the ranked three-slot one): the table `with_capacity` builds, and each table of a
/// growable filter.
pub(crate) fn buckets_for(capacity: usize, bits: FingerprintBits) -> Result<u64, BuildError> {
    buckets_at(capacity, bits, bits.full_load())
}

/// Buckets of `bits`' layout for `capacity` items: `capacity / (s · l)`
/// for buckets of `s` [slots](FingerprintBits::slots_per_bucket) sized for
/// load `l` (`load` thousandths), rounded up,
/// plus a slack ([`slack`]) that keeps small tables from being unlucky and
/// costs large ones nothing (0.2 % at a million items), rounded up to even.
pub(crate) fn buckets_at(
    capacity: usize,
    bits: FingerprintBits,
    load: u32,
) -> Result<u64, BuildError> {
    let too_large = BuildError::CapacityTooLarge { capacity };
    let base = base_buckets(capacity as u128, bits, load);
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

/// `ceil(capacity / (slots · load))` for `bits`' slots per bucket and a
/// load of `load` thousandths, exactly.
fn base_buckets(capacity: u128, bits: FingerprintBits, load: u32) -> u128 {
    let slots = u128::from(bits.slots_per_bucket());
    (capacity * 1000).div_ceil(slots * u128::from(load))
}

/// [`capacity_at`] the layout's full load: the capacity of a table that
/// `with_capacity` built, or a growable filter's.
pub(crate) fn capacity_for(buckets: u64, bits: FingerprintBits) -> usize {
    capacity_at(buckets, bits, bits.full_load())
}

/// The capacity in items of a table of `buckets` buckets of `bits`' layout
/// sized for `load` thousandths: the largest `n` for which
/// [`buckets_at`]`(n, bits, load)` is at most `buckets`, so at least the
/// capacity a table of this size was built for. (Saturates at `usize::MAX`
/// where `usize` is narrower than the answer.)
pub(crate) fn capacity_at(buckets: u64, bits: FingerprintBits, load: u32) -> usize {
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
    let n = u128::from(low) * slots * u128::from(load) / 1000;
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout and load `rate` gets.
    fn pick(rate: f64) -> Result<(FingerprintBits, u32), BuildError> {
        Builder::default().false_positive_rate(rate).choose()
    }

    #[test]
    fn rates_pick_the_cheapest_layout_and_load() {
        // The rates of the README's table and the layouts and loads they
        // need: pure arithmetic on the bounds one percent above the load.
        use FingerprintBits::*;
        for (rate, bits, load) in [
            (0.03, Ranked8, 980),
            (0.02, Bits9, 940),
            (0.012, Ranked7, 980),
            (0.01, Ranked7, 980),
            (0.0042, Ranked6, 980),
            (0.002, Ranked5, 970),
            (6e-4, Ranked5, 970),
            // Between the ranked five-slot layout's rate and 16 bits':
            // sized for less, 15.8 table bits per item against 17.0.
            (5e-4, Ranked5, 809),
            (2e-4, Bits16, 955),
            (1e-4, Bits17, 955),
            // Between 17 and 21 bits: 19.8 against 22.7.
            (5e-5, Bits17, 809),
            (1e-5, Bits21, 970),
            (2e-6, Ranked3, 910),
            // Below the ranked three-slot layout's rate at 91 %: sized for
            // less, 29.1 table bits per item against 32 bits' 33.5.
            (1e-6, Ranked3, 732),
            (5e-7, Bits32, 955),
            // Below 32 bits' rate at 95.5 %: 32 bits at a lower load.
            (1.5e-9, Bits32, 795),
        ] {
            assert_eq!(pick(rate), Ok((bits, load)), "{rate}");
        }
        // Forcing a width still forces it, sized for the highest load at
        // which it meets the rate, and is checked.
        let forced = |r: f64, b| {
            Builder::default()
                .false_positive_rate(r)
                .fingerprint_bits(b)
                .choose()
        };
        assert_eq!(forced(0.03, Bits16), Ok((Bits16, 955)));
        assert_eq!(forced(1e-4, Bits16), Ok((Bits16, 809)));
        assert!(matches!(
            forced(0.002, Bits10),
            Err(BuildError::UnreachableFalsePositiveRate { bits: 10, .. })
        ));
        // Of equal cost, the faster (plain) layout: 8 bits and the
        // semi-sorted 9 both meet 0.03 at 94 % (the ranked eight-slot
        // layout, at 98 %, costs less than either); 21 bits and the ranked
        // three-slot layout both meet 5.267·10⁻⁶ at 91 %, and 21 bits, the
        // plain one, is picked.
        assert_eq!(pick(0.03), Ok((Ranked8, 980)));
        assert_eq!(highest_load(Bits8, 0.03), Some(940));
        assert_eq!(highest_load(Bits9, 0.03), Some(940));
        assert_eq!(highest_load(Ranked3, 5.267e-6), Some(910));
        assert_eq!(pick(5.267e-6), Ok((Bits21, 910)));
        // Each layout's highest load meets the rate, and the next does not.
        for bits in FingerprintBits::ALL {
            for rate in [0.03, 1e-3, 5e-4, 1e-5] {
                if let Some(load) = highest_load(bits, rate) {
                    let at = |l| bits.false_positive_rate(FingerprintBits::rated_load(l));
                    assert!(at(load) <= rate);
                    assert!(load == bits.max_load() || at(load + 1) > rate);
                }
            }
        }
    }

    #[test]
    fn rates_pick_the_shortest_width() {
        use FingerprintBits::*;
        let bits = |r: f64| pick(r).map(|(b, _)| b);
        assert_eq!(bits(0.05), Ok(Ranked8));
        assert_eq!(bits(0.03), Ok(Ranked8));
        assert_eq!(bits(0.02), Ok(Bits9));
        assert_eq!(bits(0.012), Ok(Ranked7));
        assert_eq!(bits(0.01), Ok(Ranked7));
        assert_eq!(bits(1e-4), Ok(Bits17));
        assert_eq!(bits(2e-9), Ok(Bits32));
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
        let mut last = 0.0;
        for i in (-95 * 20..=-10 * 20).rev() {
            let rate = 10f64.powf(f64::from(i) / 200.0);
            let Ok((bits, load)) = pick(rate) else { break };
            let cost = bits.bits_per_item(load);
            assert!(cost >= last, "{rate}: {bits:?} at {load}");
            assert!(bits.false_positive_rate(FingerprintBits::rated_load(load)) <= rate);
            assert!((MIN_LOAD..=bits.max_load()).contains(&load));
            last = cost;
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
                let load = f64::from(bits.full_load()) / 1000.0;
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
        // At the layout's full load and at lower ones.
        for bits in FingerprintBits::ALL {
            for load in [MIN_LOAD, 809, 877, bits.full_load(), bits.max_load()] {
                let check = |n: usize| {
                    let buckets = buckets_at(n, bits, load).unwrap();
                    let cap = capacity_at(buckets, bits, load);
                    assert!(cap >= n, "{n}: capacity {cap}");
                    assert_eq!(buckets_at(cap, bits, load), Ok(buckets), "{n}");
                    assert!(buckets_at(cap + 1, bits, load).unwrap() > buckets, "{n}");
                };
                for n in (0..2000).chain([94, 376, 37_600, 1_000_000, 10_000_000, 123_456_789]) {
                    check(n);
                }
                let largest = capacity_at(MAX_BUCKETS, bits, load);
                assert_eq!(buckets_at(largest, bits, load), Ok(MAX_BUCKETS));
                // An unproduced bucket count (a decoded table) gets the
                // capacity of the largest table that fits in it.
                assert_eq!(capacity_at(4, bits, load), capacity_at(2, bits, load));
            }
            assert_eq!(
                capacity_for(6, bits),
                capacity_at(6, bits, bits.full_load())
            );
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
