//! The filters under test, behind one trait: this crate and its peers.

use std::cell::UnsafeCell;
use std::sync::{Mutex, RwLock};

use lockfree_cuckoo_filter::{CuckooFilter, DefaultHashBuilder, FingerprintBits, DEFAULT_SEED};

use crate::hasher::Xxh3;
use crate::keys::key;

/// A filter under test. `&self` everywhere; the ones that are not `Sync`
/// (`cuckoofilter` alone) are only driven by one thread.
pub trait Subject {
    const NAME: &'static str;
    const CAN_DELETE: bool = true;
    /// Whether a fill may use several threads.
    const PARALLEL_FILL: bool = true;
    fn insert(&self, key: u64) -> bool;
    fn contains(&self, key: u64) -> bool;
    fn remove(&self, key: u64) -> bool;
    /// Items at 100 % load (for the Bloom filter: the items it is sized for / 0.95).
    fn slots(&self) -> usize;
    /// Bytes of the structure.
    fn bytes(&self) -> usize;
}

/// This crate: `CuckooFilter` with 16-bit fingerprints and its default hasher.
pub struct Ours(pub CuckooFilter);

impl Ours {
    pub fn new(capacity: usize) -> Self {
        // The fixed seed: runs place keys alike, and `same_hash` holds.
        let f = CuckooFilter::builder()
            .capacity(capacity)
            .seed(DEFAULT_SEED)
            .build()
            .expect("a table of the benchmarked size");
        Self(f)
    }
}

impl Subject for Ours {
    const NAME: &'static str = "lockfree-cuckoo-filter";
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn slots(&self) -> usize {
        self.0.slots()
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
}

/// `atomic-cuckoo-filter` 0.3: 16-bit fingerprints, buckets of 4, power-of-two
/// bucket count (so it gets the largest power of two not above our slots).
pub struct Atomic(pub atomic_cuckoo_filter::CuckooFilter<Xxh3>);

impl Atomic {
    pub fn new(our_slots: usize) -> Self {
        let f = atomic_cuckoo_filter::CuckooFilterBuilder::<Xxh3>::default()
            .capacity(prev_pow2(our_slots))
            .fingerprint_size(16)
            .bucket_size(4)
            .build()
            .expect("atomic-cuckoo-filter config");
        Self(f)
    }
}

impl Subject for Atomic {
    const NAME: &'static str = "atomic-cuckoo-filter";
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.insert(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.remove(&key)
    }
    fn slots(&self) -> usize {
        self.0.capacity()
    }
    fn bytes(&self) -> usize {
        self.0.capacity() * 2
    }
}

type Cf = cuckoofilter::CuckooFilter<Xxh3>;

fn new_cf(our_slots: usize) -> Cf {
    // `with_capacity(c)` gives c.next_power_of_two() / 4 buckets of 4 one-byte
    // fingerprints: pass a power of two so that it gets exactly that many slots.
    Cf::with_capacity(prev_pow2(our_slots))
}

fn cf_slots(cf: &Cf) -> usize {
    // memory_usage = size_of::<Self>() + buckets * 4 bytes.
    (cf.memory_usage() - std::mem::size_of::<Cf>()) / 4 * 4
}

/// `cuckoofilter` 0.5 used by one thread (it needs `&mut` to insert and
/// remove). Not `Sync`: the `UnsafeCell` stands for the `&mut` a single owner
/// would have.
pub struct Alone(UnsafeCell<Cf>);

impl Alone {
    pub fn new(our_slots: usize) -> Self {
        Self(UnsafeCell::new(new_cf(our_slots)))
    }
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    fn cf(&self) -> &mut Cf {
        // SAFETY: `Alone` is not `Sync`, and no method keeps the reference past
        // the one call into `cuckoofilter`, which does not call back.
        unsafe { &mut *self.0.get() }
    }
}

impl Subject for Alone {
    const NAME: &'static str = "cuckoofilter";
    const PARALLEL_FILL: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.cf().add(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.cf().contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.cf().delete(&key)
    }
    fn slots(&self) -> usize {
        cf_slots(self.cf())
    }
    fn bytes(&self) -> usize {
        self.cf().memory_usage()
    }
}

/// `cuckoofilter` behind a `std::sync::RwLock`: lookups share, writes exclude.
pub struct Rw(RwLock<Cf>);

impl Rw {
    pub fn new(our_slots: usize) -> Self {
        Self(RwLock::new(new_cf(our_slots)))
    }
}

impl Subject for Rw {
    const NAME: &'static str = "RwLock<cuckoofilter>";
    const PARALLEL_FILL: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.write().unwrap().add(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.read().unwrap().contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.write().unwrap().delete(&key)
    }
    fn slots(&self) -> usize {
        cf_slots(&self.0.read().unwrap())
    }
    fn bytes(&self) -> usize {
        self.0.read().unwrap().memory_usage()
    }
}

/// `cuckoofilter` behind a `std::sync::Mutex`.
pub struct Mx(Mutex<Cf>);

impl Mx {
    pub fn new(our_slots: usize) -> Self {
        Self(Mutex::new(new_cf(our_slots)))
    }
}

impl Subject for Mx {
    const NAME: &'static str = "Mutex<cuckoofilter>";
    const PARALLEL_FILL: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.0.lock().unwrap().add(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.lock().unwrap().contains(&key)
    }
    #[inline]
    fn remove(&self, key: u64) -> bool {
        self.0.lock().unwrap().delete(&key)
    }
    fn slots(&self) -> usize {
        cf_slots(&self.0.lock().unwrap())
    }
    fn bytes(&self) -> usize {
        self.0.lock().unwrap().memory_usage()
    }
}

// One cuckoofilter table moves between the three wrappers (no refill).
impl From<Alone> for Rw {
    fn from(a: Alone) -> Self {
        Self(RwLock::new(a.0.into_inner()))
    }
}
impl From<Rw> for Mx {
    fn from(r: Rw) -> Self {
        Self(Mutex::new(r.0.into_inner().unwrap()))
    }
}
impl From<Mx> for Alone {
    fn from(m: Mx) -> Self {
        Self(UnsafeCell::new(m.0.into_inner().unwrap()))
    }
}

/// `fastbloom` 0.17 `AtomicBloomFilter` sized for 95 % of our slots at our
/// false-positive bound at 95 % load. It cannot delete.
pub struct Bloom {
    pub filter: fastbloom::AtomicBloomFilter<DefaultHashBuilder>,
    slots: usize,
}

impl Bloom {
    /// The false-positive rate the Bloom filter is sized for: our bound at 95 %.
    pub fn target_fpr() -> f64 {
        FingerprintBits::Bits16.false_positive_rate(0.95)
    }

    pub fn new(our_slots: usize) -> Self {
        let items = (our_slots as f64 * 0.95) as usize;
        let filter = fastbloom::AtomicBloomFilter::with_false_pos(Self::target_fpr())
            .hasher(DefaultHashBuilder::with_seed(DEFAULT_SEED))
            .expected_items(items);
        Self {
            filter,
            slots: our_slots,
        }
    }

    /// Fills keys `0..n` fast: several plain (non-atomic) Bloom filters with the
    /// same parameters, each filled by one thread, are OR-ed together and copied
    /// into an `AtomicBloomFilter`. Same bits as `n` atomic inserts, at a
    /// fraction of the time (an atomic insert is k locked cache misses).
    pub fn filled(our_slots: usize, n: u64, threads: usize) -> Self {
        let empty = Self::new(our_slots);
        let num_bits = empty.filter.num_bits();
        let hashes = empty.filter.num_hashes();
        drop(empty);
        let threads = threads.max(1) as u64;
        let parts: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let mut b = fastbloom::BloomFilter::with_num_bits(num_bits)
                            .hasher(DefaultHashBuilder::with_seed(DEFAULT_SEED))
                            .hashes(hashes);
                        let (lo, hi) = (n * t / threads, n * (t + 1) / threads);
                        for i in lo..hi {
                            b.insert(&key(i));
                        }
                        b.iter().collect()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut words = parts[0].clone();
        for p in &parts[1..] {
            for (w, x) in words.iter_mut().zip(p) {
                *w |= x;
            }
        }
        drop(parts);
        let filter = fastbloom::AtomicBloomFilter::from_vec(words)
            .hasher(DefaultHashBuilder::with_seed(DEFAULT_SEED))
            .hashes(hashes);
        Self {
            filter,
            slots: our_slots,
        }
    }
}

impl Subject for Bloom {
    const NAME: &'static str = "fastbloom AtomicBloomFilter";
    const CAN_DELETE: bool = false;
    #[inline]
    fn insert(&self, key: u64) -> bool {
        self.filter.insert(&key);
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&key)
    }
    fn remove(&self, _key: u64) -> bool {
        unreachable!("a Bloom filter cannot delete")
    }
    fn slots(&self) -> usize {
        self.slots
    }
    fn bytes(&self) -> usize {
        self.filter.num_bits() / 8
    }
}

/// Largest power of two not above `n` (n > 0).
pub fn prev_pow2(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}
