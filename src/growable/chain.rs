//! The chain of tables behind a growable filter, and the rules of what growth
//! can produce: at least one table and at most [`MAX_TABLES`], each new one
//! twice as large as the one before and with fingerprints that the
//! false-positive budget allows. Growth (here) and decoding (the byte format)
//! both build chains through these rules.
//!
//! # False-positive budget
//!
//! A lookup is a false positive if any table answers one, so the chain's rate
//! is at most the sum of the tables' rates (a union bound, which needs no
//! independence between tables). Each table's rate is bounded by its width at
//! load 1 (`FingerprintBits::false_positive_rate(1.0)`, an upper bound at any
//! load). Table i gets the shortest width whose bound is at most half of the
//! budget the earlier tables left, `(r - spent) / 2`; so the bounds sum to less
//! than `r` however long the chain. When every bound were exactly half of what
//! is left this is the geometric series `r·(1-q)·q^i` with `q = 1/2`; with only
//! three widths, a table usually takes far less than its half and the rest stays
//! available, so widths rise only when needed (rate 10^-3: seven 16-bit tables,
//! then 32-bit ones). When even 32-bit fingerprints exceed the half that is
//! left, the chain cannot grow: [`InsertError::RateExhausted`]. Bucket counts
//! double, so the chain also ends at 2^32 buckets (at most 33 tables; a lookup
//! reads two buckets per table).

use crate::error::{BuildError, InsertError};
use crate::fingerprint::FingerprintBits;
use crate::sync::epoch::Arc;
use crate::table::{AnyTable, MAX_BUCKETS};

/// Most tables a chain may have. Each table doubles the buckets of the one
/// before, from at least two; tables stop at 2^32 buckets.
pub(crate) const MAX_TABLES: u32 = 33;

/// The rate the tables' bounds are taken at: a table never holds more items
/// than slots, so its rate at load 1 bounds its rate at any load.
pub(super) const BOUND_LOAD: f64 = 1.0;

/// The share of the remaining false-positive budget the next table may take.
const SHARE: f64 = 0.5;

/// Below this many buckets a full table grows whatever its load: a small table
/// can be "full" for one bucket pair while mostly empty, and growing it is
/// cheap. Above it, growth needs the newest table at least half full.
const SMALL_BUCKETS: u64 = 1024;

/// The widths growth chooses from: 8, 16 and 32 bits, the widths it has
/// always used. Chains in the byte format are checked against this rule
/// ([`check_shape`]), so widening the set would refuse chains written before;
/// the other layouts (10, 12, 17 semi-sorted, 21 bits) are for filters built at a fixed
/// size, whose builder picks among all widths.
const GROWTH_WIDTHS: [FingerprintBits; 3] = [
    FingerprintBits::Bits8,
    FingerprintBits::Bits16,
    FingerprintBits::Bits32,
];

/// The shortest width of [`GROWTH_WIDTHS`] whose bound at [`BOUND_LOAD`] is at
/// most [`SHARE`] of the budget `rate - spent` that is left.
pub(super) fn width_for(rate: f64, spent: f64) -> Option<FingerprintBits> {
    let allowed = (rate - spent) * SHARE;
    GROWTH_WIDTHS
        .into_iter()
        .find(|b| b.false_positive_rate(BOUND_LOAD) <= allowed)
}

/// Whether a chain can be built for the false-positive rate `rate`.
fn valid_rate(rate: f64) -> bool {
    rate > 0.0 && rate < 1.0
}

/// The width of the first table of a chain built for `rate`, or why no chain
/// can be.
pub(super) fn first_width(rate: f64) -> Result<FingerprintBits, BuildError> {
    if !valid_rate(rate) {
        return Err(BuildError::InvalidFalsePositiveRate { rate });
    }
    width_for(rate, 0.0).ok_or(BuildError::UnreachableFalsePositiveRate {
        rate,
        best: FingerprintBits::Bits32.false_positive_rate(BOUND_LOAD) / SHARE,
        bits: 32,
    })
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
/// twice the buckets of the one before. The decoder checks this on the tables'
/// headers before it allocates any table, so that an input cannot make it
/// allocate tables (each with its fixed overhead) that growth never makes; and
/// since tables double, an input of `n` bytes holds at most `log2(n)` of them.
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
        if before.is_some_and(|b| buckets != 2 * b) {
            return Err("a table is not twice the size of the one before it");
        }
        before = Some(buckets);
        spent += bits.false_positive_rate(BOUND_LOAD);
    }
    Ok(())
}

/// The tables, oldest first (never empty), and the sum of their bounds.
pub(super) struct Chain {
    tables: Box<[Arc<AnyTable>]>,
    spent: f64,
}

impl Chain {
    /// A chain of one table.
    pub(super) fn first(table: AnyTable) -> Self {
        Self {
            spent: table.bits().false_positive_rate(BOUND_LOAD),
            tables: Box::new([Arc::new(table)]),
        }
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
        let spent: f64 = tables
            .iter()
            .map(|t| t.bits().false_positive_rate(BOUND_LOAD))
            .sum();
        if spent > rate {
            return Err("the tables' false-positive bounds exceed the rate");
        }
        let tables = tables.into_iter().map(Arc::new).collect();
        Ok(Chain { tables, spent })
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

    /// This chain plus a new, empty table: twice the buckets, the width the
    /// budget allows.
    pub(super) fn grown(&self, rate: f64) -> Result<Chain, InsertError> {
        let buckets = self.newest().buckets();
        if buckets >= MAX_BUCKETS {
            return Err(InsertError::CapacityExhausted);
        }
        let buckets = (2 * buckets).min(MAX_BUCKETS);
        let bits = width_for(rate, self.spent).ok_or(InsertError::RateExhausted {
            rate,
            tables: self.tables.len(),
        })?;
        let table = AnyTable::new(bits, buckets)?;
        let mut tables = Vec::with_capacity(self.tables.len() + 1);
        tables.extend(self.tables.iter().cloned());
        tables.push(Arc::new(table));
        Ok(Chain {
            tables: tables.into_boxed_slice(),
            spent: self.spent + bits.false_positive_rate(BOUND_LOAD),
        })
    }
}
