//! The chain of tables behind a growable filter, and the rules of what growth
//! can produce: at least one table and at most [`MAX_TABLES`], each new one
//! [`GROWTH`] times as large as the one before and with fingerprints that the
//! false-positive budget allows. Growth (here) and decoding (the byte format)
//! both build chains through these rules.
//!
//! # Growth factor
//!
//! Every table stays until the filter is dropped, and a lookup reads two
//! buckets of each (of the older ones only when their summary sends it
//! there: see "Covering" in [`super`]), so the factor trades memory for
//! lookup cost. Doubling keeps
//! the memory just after a growth at about twice what the items need, but a
//! filter grown from 1000 items to 4 M then has 13 tables, and each table also
//! spends a share of the false-positive budget, so the later ones need longer
//! fingerprints (at 10^-3: seven 16-bit tables, then 32-bit ones). Quadrupling
//! gets there in 7 tables, all 16-bit at 10^-3: fewer bucket reads per lookup,
//! and no table pays for fingerprints twice as long. The price is the
//! worst case right after a growth, when the new table is empty: about four
//! times the memory the items need (as any structure that grows by four).
//! Chains written by earlier versions, which doubled, still decode and grow
//! on by four.
//!
//! # False-positive budget
//!
//! A lookup is a false positive if any table answers one, so the chain's rate
//! is at most the sum of the tables' rates (a union bound, which needs no
//! independence between tables). Each table's rate is bounded by its width at
//! load 1 (`FingerprintBits::false_positive_rate(1.0)`, an upper bound at any
//! load; computed by [`bound`] so that every platform agrees on it). Table i
//! gets the shortest width whose bound is at most half of the budget the
//! earlier tables left, `(r - spent) / 2`; so the bounds sum to less
//! than `r` however long the chain. When every bound were exactly half of what
//! is left this is the geometric series `r·(1-q)·q^i` with `q = 1/2`; with only
//! few widths, a table usually takes far less than its half and the rest stays
//! available, so widths rise only when needed (rate 10^-3: seven 16-bit tables,
//! then 32-bit ones).
//!
//! Bucket counts grow by four up to 2^32, so a chain grown from the smallest
//! table (2 buckets) has at most [`GROWN_TABLES`] tables. The builder accepts
//! a rate only if the budget gives a width to every one of them
//! ([`first_width`]): a filter that was built never fails to grow for want of
//! false-positive budget, only for want of memory (or at 2^32 buckets). A
//! chain decoded from an older version may be longer (it doubled) or have a
//! rate below that floor (its builder took any rate), and the decoder accepts
//! both, so that saved filters still load; if such a chain's budget runs out,
//! growth fails with [`InsertError::RateExhausted`] and changes nothing.

use super::summary::Summary;
use crate::error::{BuildError, InsertError};
use crate::fingerprint::FingerprintBits;
use crate::sync::published::Arc;
use crate::table::{dispatch, AnyTable, Table, Variant, MAX_BUCKETS};

/// Most tables a chain may have: tables stop at 2^32 buckets, and each has at
/// least twice the buckets of the one before (earlier versions doubled), from
/// at least two.
pub(crate) const MAX_TABLES: u32 = 33;

/// Each new table has this many times the buckets of the newest one (see
/// "Growth factor" above).
pub(super) const GROWTH: u64 = 4;

/// Most tables growth can make from the smallest first table: 2, 8, 32, ...,
/// 2^31 buckets, and one of 2^32 (capped).
pub(super) const GROWN_TABLES: u32 = 17;

/// A table's false-positive bound in the budget: its rate at load 1 (a table
/// never holds more items than slots, so that bounds its rate at any load),
/// `1 - (1 - 2^-bits)^(2s)` for buckets of `s` slots, as
/// [`FingerprintBits::false_positive_rate`]`(1.0)` gives it, but in basic
/// arithmetic only: `2^-bits` is exact, and the power is three squarings
/// (the eighth, for buckets of four: every width growth picks) and at most
/// one product more. Each step is one IEEE 754 operation, correctly
/// rounded, so every platform computes the same bits; the decoder's check of
/// a chain ([`check_shape`]) recomputes these bounds, and must agree with the
/// machine that wrote the chain. `powf` is the platform's libm, which may
/// differ in the last bit (Miri, which perturbs it on purpose, made a filter
/// built at exactly the smallest rate fail to build).
pub(super) fn bound(bits: FingerprintBits) -> f64 {
    let miss = 1.0 - 1.0 / (1u64 << bits.bits()) as f64;
    let m2 = miss * miss;
    let m4 = m2 * m2;
    let m8 = m4 * m4;
    let kept = match bits.slots_per_bucket() {
        4 => m8,
        5 => m8 * m2,
        _ => m8 * m4,
    };
    1.0 - kept
}

/// The share of the remaining false-positive budget the next table may take.
const SHARE: f64 = 0.5;

/// Below this many buckets a full table grows whatever its load: a small table
/// can be "full" for one bucket pair while mostly empty, and growing it is
/// cheap. Above it, growth needs the newest table at least half full.
const SMALL_BUCKETS: u64 = 1024;

/// The widths growth chooses from: 8, 16 and 32 bits. Chains in the byte
/// format are checked against this rule ([`check_shape`]), so a reader
/// with another set would refuse the chains this one writes; the other
/// layouts (semi-sorted, ranked, 10, 12 and 21 bits) are for filters built
/// at a fixed size, whose builder picks among all of them.
const GROWTH_WIDTHS: [FingerprintBits; 3] = [
    FingerprintBits::Bits8,
    FingerprintBits::Bits16,
    FingerprintBits::Bits32,
];

/// The shortest width of [`GROWTH_WIDTHS`] whose [`bound`] is at
/// most [`SHARE`] of the budget `rate - spent` that is left.
pub(super) fn width_for(rate: f64, spent: f64) -> Option<FingerprintBits> {
    let allowed = (rate - spent) * SHARE;
    GROWTH_WIDTHS.into_iter().find(|&b| bound(b) <= allowed)
}

/// Whether a chain can be built for the false-positive rate `rate`.
fn valid_rate(rate: f64) -> bool {
    rate > 0.0 && rate < 1.0
}

/// The widths growth gives the tables of a chain built for `rate`, oldest
/// first, for as many tables as the budget allows, at most `tables`.
pub(super) fn widths(rate: f64, tables: u32) -> Vec<FingerprintBits> {
    let mut spent = 0.0;
    let mut out = Vec::new();
    while out.len() < tables as usize {
        let Some(bits) = width_for(rate, spent) else {
            break;
        };
        spent += bound(bits);
        out.push(bits);
    }
    out
}

/// The smallest rate for which every one of [`GROWN_TABLES`] tables gets a
/// width: about `GROWN_TABLES + 1` times the 32-bit width's bound (at that
/// rate every table is 32-bit, and the last one's bound is [`SHARE`] of the
/// budget the other 16 left). Found by bisection on the same rule growth
/// applies.
pub(super) fn smallest_rate() -> f64 {
    let grows = |rate: f64| widths(rate, GROWN_TABLES).len() == GROWN_TABLES as usize;
    let (mut low, mut high) = (0.0, 1.0);
    for _ in 0..100 {
        let mid = (low + high) / 2.0;
        if grows(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// The width of the first table of a chain built for `rate`, or why no chain
/// can be: a rate outside (0, 1), or one too small for the budget to give a
/// width to every table growth can add (see the module documentation).
pub(super) fn first_width(rate: f64) -> Result<FingerprintBits, BuildError> {
    if !valid_rate(rate) {
        return Err(BuildError::InvalidFalsePositiveRate { rate });
    }
    let widths = widths(rate, GROWN_TABLES);
    if widths.len() < GROWN_TABLES as usize {
        let longest = GROWTH_WIDTHS[GROWTH_WIDTHS.len() - 1];
        return Err(BuildError::UnreachableGrowableRate {
            rate,
            smallest: smallest_rate(),
            bits: longest.bits(),
        });
    }
    Ok(widths[0])
}

/// Whether a chain may hold `count` tables (checked on a decoded header before
/// its tables are read), or why not.
pub(crate) fn check_table_count(count: u32) -> Result<(), &'static str> {
    if (1..=MAX_TABLES).contains(&count) {
        Ok(())
    } else {
        Err("table count not in 1..=33")
    }
}

/// Whether growth can produce a chain whose tables have these layouts
/// (fingerprint width and bucket count, oldest first) for `rate`, or why not:
/// each table of the width that the budget left for it ([`width_for`], which
/// for the first table is the builder's choice) and, after the first, of
/// [`GROWTH`] times the buckets of the one before, or twice as many (what
/// earlier versions wrote), capped at 2^32. The decoder checks this on the
/// tables' headers before it allocates any table, so that an input cannot make
/// it allocate tables (each with its fixed overhead) that growth never makes;
/// and since tables at least double, an input of `n` bytes holds at most
/// `log2(n)` of them.
pub(crate) fn check_shape(
    rate: f64,
    layouts: impl IntoIterator<Item = (FingerprintBits, u64)>,
) -> Result<(), &'static str> {
    if !valid_rate(rate) {
        return Err("false-positive rate outside (0, 1)");
    }
    let mut spent = 0.0;
    let mut before: Option<u64> = None;
    for (bits, buckets) in layouts {
        if width_for(rate, spent) != Some(bits) {
            return Err("a table's fingerprint width is not the one growth gives it");
        }
        if before.is_some_and(|b| !grown_from(b, buckets)) {
            return Err("a table is not two or four times the size of the one before it");
        }
        before = Some(buckets);
        spent += bound(bits);
    }
    Ok(())
}

/// The bucket count of the table that follows one of `buckets` buckets.
fn next_buckets(buckets: u64) -> u64 {
    (GROWTH * buckets).min(MAX_BUCKETS)
}

/// Whether a table of `after` buckets can follow one of `before`: growth by
/// [`GROWTH`], or by two as earlier versions grew, capped at 2^32.
fn grown_from(before: u64, after: u64) -> bool {
    after == next_buckets(before) || after == (2 * before).min(MAX_BUCKETS)
}

/// A summary and how many of the oldest tables of a chain it covers: every
/// item those tables hold has its key in the summary.
#[derive(Clone)]
pub(super) struct Covering {
    pub(super) summary: Arc<Summary>,
    pub(super) tables: usize,
}

/// The tables, oldest first (never empty), the sum of their bounds, and the
/// summary of the older tables (see [`super::summary`] and "Covering" in the
/// module documentation of [`super`]).
pub(super) struct Chain {
    tables: Box<[Arc<AnyTable>]>,
    spent: f64,
    /// The oldest tables looked in only when the summary may hold the item.
    covered: Option<Covering>,
    /// A covering under way: the summary it fills and how many of the oldest
    /// tables it is to cover (it covers fewer, a prefix of them, if the
    /// reading of one cannot be believed). An insert into one of those tables
    /// records its item in it.
    pending: Option<Covering>,
}

impl Chain {
    /// A chain of `tables` (not empty) whose bounds sum to `spent`, nothing
    /// covered.
    fn uncovered(tables: Box<[Arc<AnyTable>]>, spent: f64) -> Self {
        Self {
            tables,
            spent,
            covered: None,
            pending: None,
        }
    }

    /// A chain of one table.
    pub(super) fn first(table: AnyTable) -> Self {
        let spent = bound(table.bits());
        Self::uncovered(Box::new([Arc::new(table)]), spent)
    }

    /// The chain `tables` (oldest first) of a filter built for `rate`, or why
    /// growth could not have produced it.
    pub(super) fn from_tables(tables: Vec<AnyTable>, rate: f64) -> Result<Self, &'static str> {
        if tables.is_empty() {
            return Err("no tables");
        }
        if !valid_rate(rate) {
            return Err("false-positive rate outside (0, 1)");
        }
        let spent: f64 = tables.iter().map(|t| bound(t.bits())).sum();
        if spent > rate {
            return Err("the tables' false-positive bounds exceed the rate");
        }
        Ok(Self::uncovered(
            tables.into_iter().map(Arc::new).collect(),
            spent,
        ))
    }

    /// The tables, oldest first.
    #[inline]
    pub(super) fn tables(&self) -> &[Arc<AnyTable>] {
        &self.tables
    }

    /// The newest table: the one inserts go to.
    #[inline]
    pub(super) fn newest(&self) -> &AnyTable {
        self.tables.last().expect("a chain is never empty")
    }

    /// The tables before the newest, oldest first.
    pub(super) fn older(&self) -> &[Arc<AnyTable>] {
        &self.tables[..self.tables.len() - 1]
    }

    /// Whether a `Full` from the newest table means lack of room (grow) rather
    /// than one crowded bucket pair.
    pub(super) fn should_grow(&self) -> bool {
        let newest = self.newest();
        newest.buckets() < SMALL_BUCKETS || 2 * newest.len() >= newest.slots()
    }

    /// This chain plus a new, empty table: [`GROWTH`] times the buckets, the
    /// width the budget allows.
    pub(super) fn grown(&self, rate: f64) -> Result<Chain, InsertError> {
        let (bits, buckets) =
            next_layout(self.newest().buckets(), self.spent, rate, self.tables.len())?;
        let table = AnyTable::new(bits, buckets)?;
        let mut tables = Vec::with_capacity(self.tables.len() + 1);
        tables.extend(self.tables.iter().cloned());
        tables.push(Arc::new(table));
        Ok(Chain {
            tables: tables.into_boxed_slice(),
            spent: self.spent + bound(bits),
            covered: self.covered.clone(),
            pending: self.pending.clone(),
        })
    }

    /// Whether `probe` answers yes in a table of the chain, newest first (see
    /// [`any_of`]): the tables not covered, then, if the summary may hold the
    /// item, the covered ones.
    #[inline]
    pub(super) fn any_of(&self, hash: u64, probe: impl Probe) -> bool {
        any_of(&self.tables[self.covered_tables()..], hash, probe) || self.any_covered(hash, probe)
    }

    /// [`Self::any_of`] on the tables before the newest.
    pub(super) fn any_older(&self, hash: u64, probe: impl Probe) -> bool {
        let older = &self.tables[..self.tables.len() - 1];
        any_of(
            &older[self.covered_tables().min(older.len())..],
            hash,
            probe,
        ) || self.any_covered(hash, probe)
    }

    /// Whether `probe` answers yes in a covered table that the summary sends
    /// the item to.
    #[inline]
    fn any_covered(&self, hash: u64, probe: impl Probe) -> bool {
        match &self.covered {
            Some(c) if c.summary.may_hold(hash) => any_of(&self.tables[..c.tables], hash, probe),
            _ => false,
        }
    }

    /// The covering of the oldest tables, if any are covered.
    pub(super) fn covered(&self) -> Option<&Covering> {
        self.covered.as_ref()
    }

    /// How many of the oldest tables are covered.
    pub(super) fn covered_tables(&self) -> usize {
        self.covered.as_ref().map_or(0, |c| c.tables)
    }

    /// The summaries that must hold the key of an item put into table
    /// `table` (its index in the chain): the chain's, if it covers the table,
    /// and a pending covering's, if it will.
    pub(super) fn summaries_of(&self, table: usize) -> impl Iterator<Item = &Summary> {
        self.coverings()
            .filter(move |c| table < c.tables)
            .map(|c| &*c.summary)
    }

    /// How many of the oldest tables a covering should cover now, and the
    /// slots they have: the tables of the first table's width, all but the
    /// two newest of the chain (the tables most items are in, and the ones
    /// inserts still go to). `None` if that is no more than are covered, or a
    /// covering is under way.
    pub(super) fn to_cover(&self) -> Option<(usize, u64)> {
        if self.pending.is_some() {
            return None;
        }
        let width = self.tables[0].bits();
        let run = self.tables.iter().take_while(|t| t.bits() == width).count();
        let target = run.min(self.tables.len().saturating_sub(2));
        let slots = self.tables[..target].iter().map(|t| t.slots() as u64).sum();
        (target > self.covered_tables()).then_some((target, slots))
    }

    /// This chain with `pending` as its covering under way (`None`: none).
    pub(super) fn with_pending(&self, pending: Option<Covering>) -> Chain {
        Chain {
            tables: self.tables.clone(),
            spent: self.spent,
            covered: self.covered.clone(),
            pending,
        }
    }

    /// This chain with its covering under way finished over the oldest
    /// `tables` tables (at most the ones it was to cover; fewer when the
    /// reading of a table could not be believed, see [`super`]): its summary
    /// covers them.
    pub(super) fn with_pending_covered(&self, tables: usize) -> Chain {
        debug_assert!(self.pending.as_ref().is_some_and(|p| tables <= p.tables));
        Chain {
            covered: self.pending.clone().map(|p| Covering { tables, ..p }),
            ..self.with_pending(None)
        }
    }

    /// The covering under way, if there is one.
    pub(super) fn pending(&self) -> Option<&Covering> {
        self.pending.as_ref()
    }

    /// The chain's covering and the one under way.
    fn coverings(&self) -> impl Iterator<Item = &Covering> {
        self.covered.iter().chain(&self.pending)
    }

    /// The summaries this chain holds (for the memory they use).
    pub(super) fn summaries(&self) -> impl Iterator<Item = &Arc<Summary>> {
        self.coverings().map(|c| &c.summary)
    }

    /// The layouts (width, bucket count) of this chain's tables, oldest first,
    /// and of those growth would add after them, `tables` in all (or as many
    /// as it has, if more): what the chain will look like once grown that far,
    /// without allocating anything. Growth is deterministic, so a chain that
    /// another thread grows meanwhile grows into these same layouts. `Err` is
    /// why growth would stop short (as [`Self::grown`] would fail).
    pub(super) fn layouts(
        &self,
        rate: f64,
        tables: usize,
    ) -> Result<Vec<(FingerprintBits, u64)>, InsertError> {
        let mut out: Vec<_> = self.tables.iter().map(|t| t.layout()).collect();
        let (mut buckets, mut spent) = (self.newest().buckets(), self.spent);
        while out.len() < tables {
            let (bits, next) = next_layout(buckets, spent, rate, out.len())?;
            spent += bound(bits);
            buckets = next;
            out.push((bits, buckets));
        }
        Ok(out)
    }
}

/// The layout (width, bucket count) of the table that growth adds after a
/// newest table of `buckets` buckets, to a chain of `tables` tables that has
/// spent `spent` of the budget for `rate`; or why it cannot add one.
fn next_layout(
    buckets: u64,
    spent: f64,
    rate: f64,
    tables: usize,
) -> Result<(FingerprintBits, u64), InsertError> {
    if buckets >= MAX_BUCKETS {
        return Err(InsertError::CapacityExhausted);
    }
    let bits = width_for(rate, spent).ok_or(InsertError::RateExhausted { rate, tables })?;
    Ok((bits, next_buckets(buckets)))
}

/// What a lookup or a remove does in one table of the chain: answer yes or
/// no for the item of a hash. Generic over the width, so that [`any_of`] runs
/// it on a run of tables of one width without dispatching on each.
pub(super) trait Probe: Copy {
    /// The answer of `table` for the item of `hash`.
    fn probe<W: Variant>(self, table: &Table<W>, hash: u64) -> bool;
}

/// Whether the table may hold the item ([`Table::contains`], validated).
#[derive(Clone, Copy)]
pub(super) struct Contains;

impl Probe for Contains {
    #[inline(always)]
    fn probe<W: Variant>(self, table: &Table<W>, hash: u64) -> bool {
        table.contains(table.position(hash))
    }
}

/// Removes one copy of the item from the table, if it holds one
/// ([`Table::remove`]).
#[derive(Clone, Copy)]
pub(super) struct Remove;

impl Probe for Remove {
    #[inline(always)]
    fn probe<W: Variant>(self, table: &Table<W>, hash: u64) -> bool {
        table.remove(table.position(hash))
    }
}

/// Whether `probe` answers yes in one of `tables` (oldest first, as in a
/// chain), asking the newest first (most items are there) and stopping at the
/// first yes.
///
/// The tables are taken in runs of one width (growth never makes a table's
/// fingerprints shorter than the one's before it, so a chain has at most three
/// runs; at the default rate, one run for its first seven tables), each run's
/// tables through their concrete type: one dispatch per run. Dispatched
/// per table, a probe cost more than the table's own work: the compiler
/// hoisted every width's fingerprint arithmetic out of the loop over the
/// tables, and each table went through a jump table. Instructions per
/// missed lookup (callgrind), per table then in runs: 529 -> 405 at 1 M items
/// (six tables), 589 -> 463 at 4 M (seven); 81 in a filter of one table.
#[inline]
pub(super) fn any_of(tables: &[Arc<AnyTable>], hash: u64, probe: impl Probe) -> bool {
    let Some(newest) = tables.last() else {
        return false;
    };
    let (yes, older) = dispatch!(&**newest, t => run(t, tables, hash, probe));
    yes || (!older.is_empty() && later_runs(older, hash, probe))
}

/// [`any_of`] for the runs after the first (a chain whose fingerprints had to
/// grow longer): out of line, so that the first run's code is not interleaved
/// with every width's.
#[inline(never)]
fn later_runs(tables: &[Arc<AnyTable>], hash: u64, probe: impl Probe) -> bool {
    let mut rest = tables;
    while let Some(newest) = rest.last() {
        let (yes, older) = dispatch!(&**newest, t => run(t, rest, hash, probe));
        if yes {
            return true;
        }
        rest = older;
    }
    false
}

/// `probe` on the newest tables of `tables` that have the width of `_newest`
/// (the last of them), newest first: whether one answered yes, and the tables
/// before that run (none if one answered yes).
#[inline(always)]
fn run<'a, W: Variant>(
    _newest: &Table<W>,
    tables: &'a [Arc<AnyTable>],
    hash: u64,
    probe: impl Probe,
) -> (bool, &'a [Arc<AnyTable>]) {
    let mut rest = tables;
    while let Some((last, older)) = rest.split_last() {
        let Some(t) = W::table(last) else { break };
        if probe.probe(t, hash) {
            return (true, &[]);
        }
        rest = older;
    }
    (false, rest)
}
