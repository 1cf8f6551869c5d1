//! The names the examples give this crate's layouts, and the ones their
//! flags take.

use lockfree_cuckoo_filter::FingerprintBits;

/// A layout as a flag names it: its width in bits (`12` is the plain
/// 12-bit layout), or `r8`, `r7`, `r6`, `r5`, `r3` for the ranked buckets of
/// eight, seven, six, five and three fingerprints a word.
pub fn parse_layout(spec: &str) -> Option<FingerprintBits> {
    match spec.trim() {
        "r8" => Some(FingerprintBits::Ranked8),
        "r7" => Some(FingerprintBits::Ranked7),
        "r6" => Some(FingerprintBits::Ranked6),
        "r5" => Some(FingerprintBits::Ranked5),
        "r3" => Some(FingerprintBits::Ranked3),
        s => s.parse().ok().and_then(FingerprintBits::from_bits),
    }
}

/// The flags' name of a layout: the inverse of [`parse_layout`].
pub fn short_name(bits: FingerprintBits) -> String {
    match bits {
        FingerprintBits::Ranked8 => "r8".into(),
        FingerprintBits::Ranked7 => "r7".into(),
        FingerprintBits::Ranked6 => "r6".into(),
        FingerprintBits::Ranked5 => "r5".into(),
        FingerprintBits::Ranked3 => "r3".into(),
        b => b.bits().to_string(),
    }
}

/// A layout's name in a table of results.
pub fn long_name(bits: FingerprintBits) -> String {
    match bits {
        FingerprintBits::Bits9 => "9-bit, semi-sorted".into(),
        FingerprintBits::Bits17 => "17-bit, semi-sorted".into(),
        FingerprintBits::Ranked8 => "9.5-bit, ranked 8".into(),
        FingerprintBits::Ranked7 => "10.6-bit, ranked 7".into(),
        FingerprintBits::Ranked6 => "12-bit, ranked 6".into(),
        FingerprintBits::Ranked5 => "14-bit, ranked 5".into(),
        FingerprintBits::Ranked3 => "22.1-bit, ranked 3".into(),
        b => format!("{}-bit", b.bits()),
    }
}
