//! The builder of a growable filter: its first table's capacity, the rate
//! it must stay under, and its hasher.

use std::hash::BuildHasher;

use super::chain::{self, Chain};
use super::GrowableCuckooFilter;
use crate::builder::buckets_for;
use crate::error::BuildError;
use crate::hasher::DefaultHashBuilder;
use crate::sync::published::Published;
use crate::table::AnyTable;

/// Builds a [`GrowableCuckooFilter`]. Obtained from
/// [`GrowableCuckooFilter::builder`]. Every option has a default: a first
/// table of 1000 items, a false-positive rate of 10^-3, and the default hasher
/// with a seed drawn at random for each filter.
///
/// ```
/// use lockfree_cuckoo_filter::GrowableCuckooFilter;
/// let f = GrowableCuckooFilter::builder()
///     .initial_capacity(1000)
///     .false_positive_rate(1e-4)
///     .build()?;
/// f.insert("x").unwrap();
/// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GrowableBuilder<S = DefaultHashBuilder> {
    pub(super) initial_capacity: usize,
    pub(super) rate: f64,
    pub(super) hasher: S,
}

impl GrowableBuilder {
    /// Hash with the default hasher started from `seed` instead of a random
    /// seed, as [`Builder::seed`](crate::Builder::seed): for filters that
    /// will be merged or whose bytes will be compared, and for reproducible
    /// runs. Keep the seed of a filter that takes keys from others secret
    /// (see [`DefaultHashBuilder`]).
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let a = GrowableCuckooFilter::builder().seed(9).build()?;
    /// let b = GrowableCuckooFilter::builder().seed(9).build()?;
    /// assert_eq!(a.hasher(), b.hasher());
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn seed(self, seed: u64) -> Self {
        self.hasher(DefaultHashBuilder::with_seed(seed))
    }
}

impl<S> GrowableBuilder<S> {
    /// Items the first table accepts (default 1000). Each growth adds a table
    /// four times as large as the newest. A size near the number of items expected saves growths,
    /// and so bucket reads on every lookup; 0 gives the smallest table.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::builder().initial_capacity(5000).build()?;
    /// assert!(f.capacity() >= 5000);
    /// let default = GrowableCuckooFilter::builder().build()?;
    /// assert!(default.capacity() >= 1000);
    /// # Ok::<(), lockfree_cuckoo_filter::BuildError>(())
    /// ```
    pub fn initial_capacity(mut self, initial: usize) -> Self {
        self.initial_capacity = initial;
        self
    }

    /// The false-positive rate the filter must stay under however large it
    /// grows (default 10^-3). It must be in (0, 1) and large enough that the
    /// budget gives a fingerprint width to every table growth can add (17, up
    /// to 2^32 buckets): about 3.4·10^-8 with 32-bit fingerprints at most
    /// ([`build`](Self::build) says the exact floor when it is not). A filter
    /// built never fails to grow for want of budget; the lower the rate, the
    /// longer the fingerprints of later tables.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, FingerprintBits, GrowableCuckooFilter};
    /// let f = GrowableCuckooFilter::builder().false_positive_rate(0.1).build()?;
    /// assert_eq!(f.fingerprint_bits(), vec![FingerprintBits::Bits8]);
    /// assert!(matches!(
    ///     GrowableCuckooFilter::builder().false_positive_rate(1e-9).build(),
    ///     Err(BuildError::UnreachableGrowableRate { .. })
    /// ));
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.rate = rate;
        self
    }

    /// The hasher items are hashed with (see
    /// [`Builder::hasher`](crate::Builder::hasher); the default is
    /// [`DefaultHashBuilder`] with a random seed).
    ///
    /// ```
    /// use std::collections::hash_map::RandomState;
    /// use lockfree_cuckoo_filter::GrowableCuckooFilter;
    /// let f = GrowableCuckooFilter::builder().hasher(RandomState::new()).build()?;
    /// f.insert("x")?;
    /// assert!(f.contains("x"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hasher<T: BuildHasher>(self, hasher: T) -> GrowableBuilder<T> {
        GrowableBuilder {
            initial_capacity: self.initial_capacity,
            rate: self.rate,
            hasher,
        }
    }

    /// Builds the filter (its first table), or says which option is
    /// impossible.
    ///
    /// ```
    /// use lockfree_cuckoo_filter::{BuildError, GrowableCuckooFilter};
    /// assert!(GrowableCuckooFilter::builder().build().is_ok());
    /// assert!(matches!(
    ///     GrowableCuckooFilter::builder().false_positive_rate(0.0).build(),
    ///     Err(BuildError::InvalidFalsePositiveRate { .. })
    /// ));
    /// ```
    pub fn build(self) -> Result<GrowableCuckooFilter<S>, BuildError>
    where
        S: BuildHasher,
    {
        let rate = self.rate;
        let bits = chain::first_width(rate)?;
        let buckets = buckets_for(self.initial_capacity, bits)?;
        Ok(GrowableCuckooFilter {
            chain: Published::new(Chain::first(AnyTable::new(bits, buckets)?)),
            rate,
            hasher: self.hasher,
        })
    }
}
