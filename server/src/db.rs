//! The keyspace: names mapped to filters, shared by every connection.
//!
//! The map is a [`papaya::HashMap`]: a lookup takes no lock and writes no
//! shared memory, so every core looks up names at once; creating or
//! deleting a name does not block lookups either. A value is an
//! `Arc<Entry>`: a command looks its filter up and runs the filter operation
//! on it with no lock held (the filters are lock-free). A filter deleted
//! while a command runs on it stays alive until that command is done.
//!
//! Each filter is a [`CuckooFilter`] (a fixed size, `EXPANSION 0`) or a
//! [`GrowableCuckooFilter`] (any other expansion, and filters that `CF.ADD`
//! creates), hashing the raw bytes of each item with its own random seed.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use lockfree_cuckoo_filter::{BuildError, CuckooFilter, GrowableCuckooFilter, InsertError};

/// A filter of either kind.
pub enum Filter {
    /// A fixed-size filter: inserts fail once it is full.
    Fixed(CuckooFilter),
    /// A filter that adds tables as it fills.
    Growable(GrowableCuckooFilter),
}

impl Filter {
    /// Adds `item` (a copy more if it is there).
    pub fn insert(&self, item: &[u8]) -> Result<(), InsertError> {
        match self {
            Filter::Fixed(f) => f.insert(item),
            Filter::Growable(f) => f.insert(item),
        }
    }

    /// Adds `item` unless it is (or seems) present; whether it did.
    pub fn insert_if_absent(&self, item: &[u8]) -> Result<bool, InsertError> {
        match self {
            Filter::Fixed(f) => f.insert_if_absent(item),
            Filter::Growable(f) => f.insert_if_absent(item),
        }
    }

    /// Whether `item` may be present.
    pub fn contains(&self, item: &[u8]) -> bool {
        match self {
            Filter::Fixed(f) => f.contains(item),
            Filter::Growable(f) => f.contains(item),
        }
    }

    /// Copies of `item` held (see the library's `count`).
    pub fn count(&self, item: &[u8]) -> usize {
        match self {
            Filter::Fixed(f) => f.count(item),
            Filter::Growable(f) => f.count(item),
        }
    }

    /// Looks every item up at once (faster than one by one on large tables).
    pub fn contains_batch(&self, items: &[&[u8]], out: &mut [bool]) {
        match self {
            Filter::Fixed(f) => f.contains_batch(items, out),
            Filter::Growable(f) => f.contains_batch(items, out),
        };
    }

    /// Removes one copy of `item`; whether there was one.
    pub fn remove(&self, item: &[u8]) -> bool {
        match self {
            Filter::Fixed(f) => f.remove(item),
            Filter::Growable(f) => f.remove(item),
        }
    }

    /// Fingerprints held: items inserted (copies included) less those removed.
    pub fn len(&self) -> usize {
        match self {
            Filter::Fixed(f) => f.len(),
            Filter::Growable(f) => f.len(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items it holds before it is full (a growable filter: before it grows).
    pub fn capacity(&self) -> usize {
        match self {
            Filter::Fixed(f) => f.capacity(),
            Filter::Growable(f) => f.capacity(),
        }
    }

    /// Bytes of memory it takes.
    pub fn memory_usage(&self) -> usize {
        match self {
            Filter::Fixed(f) => f.memory_usage(),
            Filter::Growable(f) => f.memory_usage(),
        }
    }

    /// Buckets in all its tables.
    pub fn buckets(&self) -> u64 {
        match self {
            Filter::Fixed(f) => f.bucket_count(),
            // Four fingerprints a bucket, as the library counts slots.
            Filter::Growable(f) => (f.slots() / 4) as u64,
        }
    }

    /// Tables: 1 for a fixed filter.
    pub fn tables(&self) -> usize {
        match self {
            Filter::Fixed(_) => 1,
            Filter::Growable(f) => f.table_count(),
        }
    }

    /// Its false-positive rate bound at its present load.
    pub fn false_positive_rate(&self) -> f64 {
        match self {
            Filter::Fixed(f) => f.false_positive_rate(),
            Filter::Growable(f) => f.false_positive_rate(),
        }
    }

    /// Its bytes, in the library's format, as a live snapshot.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Filter::Fixed(f) => f.to_bytes(),
            Filter::Growable(f) => f.to_bytes(),
        }
    }

    /// Appends [`to_bytes`](Self::to_bytes)'s bytes to `out`, without a
    /// second copy of them.
    pub fn append_to(&self, out: &mut Vec<u8>) {
        // Writing to a `Vec` cannot fail.
        let _ = match self {
            Filter::Fixed(f) => f.write_to(out),
            Filter::Growable(f) => f.write_to(out),
        };
    }

    /// Decodes bytes that [`to_bytes`](Self::to_bytes) wrote, of either kind.
    pub fn from_bytes(bytes: &[u8]) -> Result<Filter, lockfree_cuckoo_filter::DecodeError> {
        match GrowableCuckooFilter::from_bytes(bytes) {
            Err(lockfree_cuckoo_filter::DecodeError::WrongFilterType { growable: false }) => {
                CuckooFilter::from_bytes(bytes).map(Filter::Fixed)
            }
            other => other.map(Filter::Growable),
        }
    }
}

/// What `CF.RESERVE` was given that the filter itself does not record:
/// accepted and reported by `CF.INFO`, as RedisBloom does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// `BUCKETSIZE` (RedisBloom's default 2; the layout here has its own).
    pub bucket_size: u64,
    /// `MAXITERATIONS` (RedisBloom's default 20).
    pub max_iterations: u64,
    /// `EXPANSION` (RedisBloom's default 1; 0 makes a fixed-size filter).
    pub expansion: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            bucket_size: 2,
            max_iterations: 20,
            expansion: 1,
        }
    }
}

/// One name's value.
pub struct Entry {
    /// The filter.
    pub filter: Filter,
    /// Successful `CF.DEL`s, for `CF.INFO`.
    pub deleted: AtomicU64,
    /// The options it was reserved with.
    pub params: Params,
    /// Bytes charged against the memory limit for it: its size (and its
    /// name's cost) when it was made, then after each growth that
    /// [`Db::charge_growth`] saw; [`DETACHED`] once it left the map
    /// (nothing it does is charged after). Changed only by compare-and-swap,
    /// and the map's total by the same difference, so the total is the sum
    /// of its entries' charges (and of the bytes [`Held`]).
    charged: AtomicUsize,
    /// Its filter's tables when it was last charged: a growth adds one.
    tables: AtomicUsize,
    /// What its name costs ([`name_cost`]), charged with the filter; set
    /// when it is put in the map.
    name_cost: usize,
}

/// Bytes a name costs in the map: its bytes and an entry's own. Charged
/// against the memory limit with the filter, so that names (up to
/// `proto-max-bulk-len` each) cannot take memory past the limit.
pub fn name_cost(key: &[u8]) -> usize {
    key.len() + std::mem::size_of::<Entry>()
}

/// [`Entry::charged`] of an entry that is no longer in the map.
const DETACHED: usize = usize::MAX;

impl Entry {
    /// An entry for `filter`, charged at its present size.
    pub fn new(filter: Filter, params: Params, deleted: u64) -> Entry {
        Entry {
            charged: filter.memory_usage().into(),
            tables: filter.tables().into(),
            name_cost: 0,
            filter,
            deleted: deleted.into(),
            params,
        }
    }

    /// The entry, charged for `key` as well, to put under it.
    fn named(mut self, key: &[u8]) -> Entry {
        self.name_cost = name_cost(key);
        *self.charged.get_mut() += self.name_cost;
        self
    }

    /// Bytes charged for it now (its size and its name's, when last charged).
    pub fn charged(&self) -> usize {
        self.charged.load(Ordering::Relaxed)
    }

    /// Takes it out of the memory count: what it was charged.
    fn detach(&self) -> usize {
        match self.charged.swap(DETACHED, Ordering::Relaxed) {
            DETACHED => 0,
            charged => charged,
        }
    }
}

/// Bytes held outside the filters for a while (a dump `CF.SCANDUMP` is
/// handing out, or one `CF.LOADCHUNK` is receiving), charged against the
/// memory limit until dropped.
pub struct Held {
    db: Arc<Db>,
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.db.charged.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// A filter made for a name and charged against the memory limit
/// ([`Db::admit`]), not yet in the map.
pub struct NewEntry {
    entry: Entry,
    held: Held,
}

/// Why a filter could not be created.
#[derive(Debug)]
pub enum CreateError {
    /// The name is taken.
    Exists,
    /// It would take the filters over the memory limit.
    OverMemoryLimit {
        /// Bytes it would take.
        wanted: usize,
        /// Bytes left under the limit.
        left: usize,
    },
    /// The library refused the options (or the allocation).
    Build(BuildError),
}

impl std::fmt::Display for CreateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CreateError::Exists => f.write_str("ERR item exists"),
            CreateError::OverMemoryLimit { wanted, left } => write!(
                f,
                "ERR Insufficient memory to create filter: it would take {wanted} bytes, \
                 {left} are left under maxmemory"
            ),
            CreateError::Build(BuildError::AllocationFailed(_)) => {
                f.write_str("ERR Insufficient memory to create filter")
            }
            CreateError::Build(e) => write!(f, "ERR Could not create filter: {e}"),
        }
    }
}

/// How to build a new filter.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Items it must hold (a growable filter: before its first growth).
    pub capacity: usize,
    /// The false-positive rate it must stay under.
    pub rate: f64,
    /// RedisBloom's options, recorded; `expansion == 0` makes it fixed.
    pub params: Params,
}

/// The shared keyspace.
pub struct Db {
    map: papaya::HashMap<Box<[u8]>, Arc<Entry>>,
    /// Bytes the filters may take, all together (0: no limit).
    max_memory: usize,
    /// Bytes charged by the filters in the map, the sum of their entries'
    /// [`Entry::charged`], and by the dumps held ([`Held`]).
    charged: AtomicUsize,
    /// Whether anything changed since the last save began.
    dirty: AtomicBool,
}

impl Db {
    /// An empty keyspace whose filters may take `max_memory` bytes in all
    /// (0: no limit).
    pub fn new(max_memory: usize) -> Db {
        Db {
            map: papaya::HashMap::new(),
            max_memory,
            charged: AtomicUsize::new(0),
            dirty: AtomicBool::new(false),
        }
    }

    /// Whether `key` names a filter.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.map.pin().contains_key(key)
    }

    /// Runs `f` on the entry of `key`, if there is one, with no lock held.
    #[inline]
    pub fn with<R>(&self, key: &[u8], f: impl FnOnce(&Entry) -> R) -> Option<R> {
        let map = self.map.pin();
        map.get(key).map(|entry| f(entry))
    }

    /// The entry of `key`, if any.
    pub fn get(&self, key: &[u8]) -> Option<Arc<Entry>> {
        self.map.pin().get(key).cloned()
    }

    /// Notes a change just made, for the save schedule: a store only when
    /// the flag is not already set, so that writers on every core do not
    /// contend for it.
    ///
    /// The fence pairs with the one in [`take_dirty`](Self::take_dirty):
    /// if this fence comes first in the single order of SeqCst fences, the
    /// save, whose reads follow its fence, sees the change; otherwise the
    /// load below sees the save's clearing and sets the flag again. Without
    /// the fences both could miss (a write and a read on each side), and a
    /// change would wait for the next one to be saved.
    #[inline]
    pub fn touch(&self) {
        fence(Ordering::SeqCst);
        if !self.dirty.load(Ordering::Relaxed) {
            self.dirty.store(true, Ordering::SeqCst);
        }
    }

    /// Whether anything changed since the last [`take_dirty`](Self::take_dirty).
    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::SeqCst)
    }

    /// Clears the change flag before a save reads the filters; whether it
    /// was set. Its fence orders the clearing before the save's reads (see
    /// [`touch`](Self::touch)).
    pub fn take_dirty(&self) -> bool {
        let was = self.dirty.swap(false, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        was
    }

    /// Bytes a filter built from `spec` would take, without building it: the
    /// slots a smaller filter of the same rate takes per item (the builder
    /// picks the layout and the load from the rate), times the capacity.
    pub fn estimate(spec: &Spec) -> Result<usize, BuildError> {
        const PROBE: usize = 1 << 16;
        let probe = spec.capacity.min(PROBE);
        let (slots, bits_per_slot) = if spec.params.expansion == 0 {
            let f = CuckooFilter::builder()
                .capacity(probe)
                .false_positive_rate(spec.rate)
                .build()?;
            (f.slots(), f.fingerprint_bits().bits_per_slot())
        } else {
            let f = GrowableCuckooFilter::builder()
                .initial_capacity(probe)
                .false_positive_rate(spec.rate)
                .build()?;
            (f.slots(), f.fingerprint_bits()[0].bits_per_slot())
        };
        let per_item = slots as f64 / probe.max(1) as f64;
        let bytes = spec.capacity as f64 * per_item * bits_per_slot / 8.0;
        Ok((bytes as usize).saturating_add(4096))
    }

    /// Builds a filter from `spec` to put under `key`, refusing one that
    /// would take the filters (and their names) over the memory limit.
    pub fn build(self: &Arc<Db>, spec: &Spec, key: &[u8]) -> Result<NewEntry, CreateError> {
        let bytes = Db::estimate(spec).map_err(CreateError::Build)?;
        self.check_memory(bytes.saturating_add(name_cost(key)))?;
        let filter = if spec.params.expansion == 0 {
            Filter::Fixed(
                CuckooFilter::builder()
                    .capacity(spec.capacity)
                    .false_positive_rate(spec.rate)
                    .build()
                    .map_err(CreateError::Build)?,
            )
        } else {
            Filter::Growable(
                GrowableCuckooFilter::builder()
                    .initial_capacity(spec.capacity)
                    .false_positive_rate(spec.rate)
                    .build()
                    .map_err(CreateError::Build)?,
            )
        };
        self.admit(key, filter, spec.params, 0)
    }

    /// Checks that a filter of `bytes` fits under the memory limit, as the
    /// total stands now: a guard before building a filter, so that no table
    /// far over the limit is allocated. What a filter takes is charged by
    /// [`admit`](Self::admit).
    fn check_memory(&self, bytes: usize) -> Result<(), CreateError> {
        if self.max_memory == 0 {
            return Ok(());
        }
        self.reserve(bytes, false)
    }

    /// Charges `bytes` if they fit under the memory limit (with no limit,
    /// if the total can count them), in one compare-and-swap on the total:
    /// of threads charging at once, no more are granted than fit. With
    /// `charge` false, only checks.
    fn reserve(&self, bytes: usize, charge: bool) -> Result<(), CreateError> {
        let mut now = self.charged.load(Ordering::Relaxed);
        loop {
            let left = match self.max_memory {
                0 => usize::MAX - now,
                max => max.saturating_sub(now),
            };
            if bytes > left {
                return Err(CreateError::OverMemoryLimit {
                    wanted: bytes,
                    left,
                });
            }
            if !charge {
                return Ok(());
            }
            match self.charged.compare_exchange_weak(
                now,
                now + bytes,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(seen) => now = seen,
            }
        }
    }

    /// Charges `bytes` about to be held outside the filters, if they fit
    /// under the memory limit; until the [`Held`] is dropped.
    pub fn hold(self: &Arc<Db>, bytes: usize) -> Result<Held, CreateError> {
        self.reserve(bytes, true)?;
        Ok(Held {
            db: Arc::clone(self),
            bytes,
        })
    }

    /// Charges a new filter (with its options, and the deletes it counts),
    /// and its name, against the memory limit if it fits: an entry to put
    /// under `key` with [`insert_new`](Self::insert_new), which keeps the
    /// charge, or to drop, which gives it back.
    pub fn admit(
        self: &Arc<Db>,
        key: &[u8],
        filter: Filter,
        params: Params,
        deleted: u64,
    ) -> Result<NewEntry, CreateError> {
        let entry = Entry::new(filter, params, deleted).named(key);
        let held = self.hold(entry.charged())?;
        Ok(NewEntry { entry, held })
    }

    /// Whether the filters are charged more than the memory limit (their
    /// growth included): then inserts that may grow a filter are refused,
    /// as Redis refuses commands that may take memory past `maxmemory`.
    pub fn over_memory(&self) -> bool {
        self.max_memory > 0 && self.charged.load(Ordering::Relaxed) > self.max_memory
    }

    /// Charges what `entry`'s filter grew by since it was last charged, if
    /// it added a table; call it after inserting into a growable filter.
    /// A fixed filter never grows, and answers at the first comparison.
    /// Without a growth it only reads: every connection's inserts into one
    /// filter go through here, and a write would bounce the entry's cache
    /// line between their cores.
    ///
    /// The charge is the filter's size as read after a growth, and only ever
    /// rises (a growable filter never shrinks): of two threads that saw two
    /// growths, the one that read the smaller size cannot undo the other's
    /// charge. What a growth adds after its table (the summary that covers
    /// the older tables, built by the growing thread) may be read by the next
    /// growth's charge instead: the charge can lag the size by that much.
    pub fn charge_growth(&self, entry: &Entry) {
        let tables = entry.filter.tables();
        if entry.tables.load(Ordering::Relaxed) == tables
            || entry.tables.swap(tables, Ordering::Relaxed) == tables
        {
            return;
        }
        let now = entry.filter.memory_usage() + entry.name_cost;
        let mut old = entry.charged.load(Ordering::Relaxed);
        loop {
            if old == DETACHED || old >= now {
                return;
            }
            match entry.charged.compare_exchange_weak(
                old,
                now,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(seen) => old = seen,
            }
        }
        // The total rises by the entry's own rise: however charges and a
        // removal interleave, it stays the sum over the entries.
        self.charged.fetch_add(now - old, Ordering::Relaxed);
    }

    /// Puts `new` under `key` if the name is free, its charge with it (the
    /// charge is given back otherwise); the entry under the name afterwards
    /// (the one given, or the one that was there) and whether it was added.
    pub fn insert_new(&self, key: &[u8], new: NewEntry) -> (Arc<Entry>, bool) {
        let NewEntry { entry, mut held } = new;
        let map = self.map.pin();
        match map.try_insert(key.into(), Arc::new(entry)) {
            Ok(added) => {
                // The entry's charge is the one held: it stays in the total.
                held.bytes = 0;
                self.touch();
                (Arc::clone(added), true)
            }
            Err(e) => (Arc::clone(e.current), false),
        }
    }

    /// Puts `entry` under `key`, replacing any filter there.
    pub fn replace(&self, key: &[u8], entry: Entry) {
        let entry = entry.named(key);
        let charged = entry.charged();
        let old = self.map.pin().insert(key.into(), Arc::new(entry)).cloned();
        self.charged.fetch_add(charged, Ordering::Relaxed);
        if let Some(old) = old {
            self.charged.fetch_sub(old.detach(), Ordering::Relaxed);
        }
        self.touch();
    }

    /// Deletes `key`; whether it was there.
    pub fn remove(&self, key: &[u8]) -> bool {
        let map = self.map.pin();
        match map.remove(key) {
            Some(old) => {
                self.charged.fetch_sub(old.detach(), Ordering::Relaxed);
                self.touch();
                true
            }
            None => false,
        }
    }

    /// Deletes every key.
    pub fn clear(&self) {
        let map = self.map.pin();
        for key in map.keys() {
            if let Some(old) = map.remove(key) {
                self.charged.fetch_sub(old.detach(), Ordering::Relaxed);
            }
        }
        self.touch();
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every key and its entry, at some moment during the call.
    pub fn entries(&self) -> Vec<(Box<[u8]>, Arc<Entry>)> {
        let map = self.map.pin();
        map.iter()
            .map(|(k, v)| (k.clone(), Arc::clone(v)))
            .collect()
    }

    /// The names, in no order.
    pub fn keys(&self) -> Vec<Box<[u8]>> {
        self.map.pin().keys().cloned().collect()
    }

    /// Runs `f` over the names, in no order, without copying them. Every
    /// name in the map for the whole call is seen once; one added or
    /// removed meanwhile may be seen or not. Entries removed while `f` runs
    /// are not freed before it returns.
    pub fn with_keys<R>(&self, f: impl FnOnce(&mut dyn Iterator<Item = &[u8]>) -> R) -> R {
        let map = self.map.pin();
        f(&mut map.keys().map(|k| &k[..]))
    }

    /// Bytes the filters and their names take now.
    pub fn memory_usage(&self) -> usize {
        let map = self.map.pin();
        map.iter()
            .map(|(k, e)| e.filter.memory_usage() + name_cost(k))
            .sum()
    }

    /// The memory limit (0: none).
    pub fn max_memory(&self) -> usize {
        self.max_memory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(db: &Db) -> usize {
        db.charged.load(Ordering::Relaxed)
    }

    /// The estimate that guards a build is close to what the filter takes,
    /// whatever layout and load the rate picks.
    #[test]
    fn estimates_are_close_to_the_built_size() {
        for expansion in [0, 2] {
            for rate in [0.03, 0.01, 0.003, 1e-4, 1e-6, 1e-7] {
                for capacity in [1000, 100_000, 3_000_000] {
                    let spec = Spec {
                        capacity,
                        rate,
                        params: Params {
                            expansion,
                            ..Params::default()
                        },
                    };
                    let built = Arc::new(Db::new(0)).build(&spec, b"k").unwrap();
                    let actual = built.entry.filter.memory_usage() as f64;
                    let estimate = Db::estimate(&spec).unwrap() as f64;
                    assert!(
                        estimate >= 0.97 * actual && estimate <= 1.1 * actual + 4096.0,
                        "{capacity} items at {rate}, expansion {expansion}: \
                         estimate {estimate} for {actual} bytes"
                    );
                }
            }
        }
    }

    /// Of filters created at once under a limit, no more are admitted than
    /// fit: the charge is one compare-and-swap on the total.
    #[test]
    fn concurrent_creations_never_pass_the_limit() {
        let spec = Spec {
            capacity: 100_000,
            rate: 0.01,
            params: Params::default(),
        };
        let one = Arc::new(Db::new(0))
            .build(&spec, b"k00")
            .unwrap()
            .entry
            .charged();
        for _ in 0..20 {
            // Room for three and a half.
            let db = Arc::new(Db::new(one * 7 / 2));
            let admitted = std::sync::atomic::AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for t in 0..8 {
                    let (db, spec, admitted) = (&db, &spec, &admitted);
                    scope.spawn(move || {
                        let key = format!("k{t:02}");
                        if let Ok(new) = db.build(spec, key.as_bytes()) {
                            assert!(db.insert_new(key.as_bytes(), new).1);
                            admitted.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
            assert_eq!(admitted.load(Ordering::Relaxed), 3);
            assert!(
                total(&db) <= db.max_memory(),
                "{} > {}",
                total(&db),
                db.max_memory()
            );
            assert_eq!(total(&db), db.memory_usage());
        }
    }

    /// A growable filter's growth is charged, also while other threads
    /// insert; once the entry leaves the map, nothing it grows by is, so
    /// the total comes back to zero.
    #[test]
    fn growth_is_charged_until_the_entry_leaves() {
        let db = Arc::new(Db::new(0));
        let spec = Spec {
            capacity: 64,
            rate: 0.01,
            params: Params::default(),
        };
        let entry = db.insert_new(b"g", db.build(&spec, b"g").unwrap()).0;
        let at_creation = total(&db);
        let name = name_cost(b"g");
        assert_eq!(at_creation, entry.filter.memory_usage() + name);
        let insert = |t: u32, range: std::ops::Range<u32>| {
            for i in range {
                let _ = entry.filter.insert(&(t << 24 | i).to_le_bytes());
                db.charge_growth(&entry);
            }
        };
        std::thread::scope(|s| {
            for t in 0..2 {
                s.spawn(move || insert(t, 0..20_000));
            }
        });
        // Charged for its growth, at most its size (the last growth's
        // covering summary may wait for the next growth).
        assert!(entry.filter.tables() > 1);
        assert_eq!(entry.charged(), total(&db));
        assert!(total(&db) > at_creation);
        assert!(total(&db) <= entry.filter.memory_usage() + name);
        // Removed while two threads go on growing it.
        std::thread::scope(|s| {
            for t in 0..2 {
                s.spawn(move || insert(t, 20_000..200_000));
            }
            s.spawn(|| {
                while entry.filter.len() < 60_000 {
                    std::thread::yield_now();
                }
                assert!(db.remove(b"g"));
            });
        });
        assert_eq!(total(&db), 0, "growth after the removal was charged");
        // Put back (as a replace would), charged at its size now.
        db.replace(
            b"g",
            Entry::new(
                Filter::Fixed(CuckooFilter::with_capacity(10)),
                Params::default(),
                0,
            ),
        );
        assert_eq!(total(&db), db.memory_usage());
        db.clear();
        assert_eq!(total(&db), 0);
    }
}
