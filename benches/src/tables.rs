//! The two table sizes every workload runs at: one that fits in L2, one far
//! larger than the caches.

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

#[cfg(test)]
mod tests {
    use super::*;

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
