//! The two table sizes every workload runs at: one that fits in L2, one far
//! larger than the caches; and tables of a given byte size for any width.

use lockfree_cuckoo_filter::{CuckooFilter, FingerprintBits, DEFAULT_SEED};

/// Which of the two tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Size {
    Small,
    Big,
}

impl Size {
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Big => "big",
        }
    }

    /// Parses a comma-separated list of sizes (`small`, `big` or
    /// `small,big`); the result is in that order, each size once.
    pub fn parse_list(spec: &str) -> Result<Vec<Size>, String> {
        let mut sizes = Vec::new();
        for name in spec.split(',').map(str::trim) {
            match name {
                "small" => sizes.push(Size::Small),
                "big" => sizes.push(Size::Big),
                _ => return Err(format!("not a table size: {name:?} (small or big)")),
            }
        }
        sizes.sort();
        sizes.dedup();
        Ok(sizes)
    }
}

/// How large the two tables are.
#[derive(Clone, Copy, Debug)]
pub struct Tables {
    /// The capacity of the small table.
    pub small_items: usize,
    /// The size of the big table in MiB.
    pub big_mib: f64,
}

impl Tables {
    /// 65536 items (a 171 KiB table) and 512 MiB.
    pub const DEFAULT: Tables = Tables {
        small_items: 65536,
        big_mib: 512.0,
    };

    /// The capacity our filter is built with for `size`.
    pub fn capacity(&self, size: Size) -> usize {
        match size {
            Size::Small => self.small_items,
            Size::Big => capacity_for_mib(self.big_mib),
        }
    }
}

/// The capacity that gives our filter (16-bit fingerprints) a table of `mib` MiB.
pub fn capacity_for_mib(mib: f64) -> usize {
    // 8 bytes per bucket of 4, sized at 94 % load (see the builder).
    (mib * (1u64 << 20) as f64 / 8.0 * 4.0 * 0.94) as usize
}

/// Our filter with `bits`-bit fingerprints and the fixed seed, built for
/// `capacity` items.
pub fn filter_with(capacity: usize, bits: FingerprintBits) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .fingerprint_bits(bits)
        .seed(DEFAULT_SEED)
        .build()
        .expect("a table of the benchmarked size")
}

/// The largest capacity whose filter with `bits`-bit fingerprints takes at
/// most `bytes` by `memory_usage()`, or `None` where even one item does not
/// fit.
pub fn capacity_for_bytes(bits: FingerprintBits, bytes: usize) -> Option<usize> {
    // Every layout spends at least 8 bits on a slot, so `bytes` items never fit.
    largest_capacity(bits, bytes, |f| f.memory_usage() <= bytes)
}

/// The largest capacity below `never` whose filter with `bits`-bit
/// fingerprints passes `fits` (which must hold for every capacity below one
/// that passes), or `None` where capacity 1 does not. Builds the candidates:
/// a fresh table is zero pages the OS has not yet handed out, so each costs
/// little more than the calls. A candidate the builder refuses (too large)
/// does not fit.
pub fn largest_capacity(
    bits: FingerprintBits,
    never: usize,
    fits: impl Fn(&CuckooFilter) -> bool,
) -> Option<usize> {
    let passes = |capacity| {
        CuckooFilter::builder()
            .capacity(capacity)
            .fingerprint_bits(bits)
            .seed(DEFAULT_SEED)
            .build()
            .is_ok_and(|f| fits(&f))
    };
    if !passes(1) {
        return None;
    }
    let (mut low, mut high) = (1, never);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if passes(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    Some(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_for_bytes_fills_the_bytes_without_passing_them() {
        let bytes = 1 << 20;
        for bits in FingerprintBits::ALL {
            let cap = capacity_for_bytes(bits, bytes).unwrap();
            let used = filter_with(cap, bits).memory_usage();
            assert!(used <= bytes, "{bits:?}: {used} bytes");
            assert!(used as f64 >= 0.98 * bytes as f64, "{bits:?}: {used} bytes");
        }
        assert_eq!(capacity_for_bytes(FingerprintBits::Bits16, 64), None);
    }

    #[test]
    fn size_lists_parse_in_order_and_refuse_unknown_names() {
        assert_eq!(
            Size::parse_list("big,small"),
            Ok(vec![Size::Small, Size::Big])
        );
        assert_eq!(Size::parse_list("big"), Ok(vec![Size::Big]));
        assert!(Size::parse_list("medium").is_err());
        assert!(Size::parse_list("").is_err());
    }
}
