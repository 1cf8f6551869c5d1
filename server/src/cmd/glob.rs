//! Redis's glob patterns, as `KEYS`, `SCAN ... MATCH` and `CONFIG GET` read
//! them: `*` (any run of bytes), `?` (any one byte), `[...]` (one byte of a
//! class: bytes, ranges such as `a-z`, `\` escapes, and `^` first to negate
//! it; a class left open runs to the end of the pattern), and `\` (the next
//! byte as itself; a `\` that ends the pattern is itself).
//!
//! Every token but `*` matches exactly one byte, so a pattern is a row of
//! fixed-length segments with a `*` between each two. A name matches when
//! the first segment matches at its start, the last at its end (a pattern
//! without `*` is one segment that must match the whole name), and the
//! segments between occur in order, without overlapping, in what is left:
//! taking each of those at its leftmost occurrence is enough, since any
//! match can move its segments to the left one by one and still match.
//!
//! [`Glob`] compiles a pattern once for all the names a command matches.
//! The anchored segments cost their length; a middle segment of plain bytes
//! is found with `memchr`'s `memmem` (linear in the name); one with `?` or
//! classes is compared at each position, which can cost the name's length
//! times the segment's. That work is counted against a [`Work`] budget, and
//! a match that would spend more fails with [`TooComplex`] rather than keep
//! a client waiting without end.
//!
//! A compiled pattern takes up to 9 bytes a token, 48 a segment (and its
//! allocations) and 32 a distinct class.

use std::collections::HashMap;

/// A set of bytes, one bit each.
type Set = [u64; 4];

/// A compiled token other than `*`: each matches exactly one byte.
#[derive(Clone, Copy)]
enum Tok {
    /// This byte (also a class of one byte).
    Byte(u8),
    /// Any byte: `?`, or a class of all of them.
    Any,
    /// A byte of the class at this index in [`Glob::sets`].
    Class(u32),
}

/// The wildcard-search work one command may still do, past a unit a byte of
/// the names searched (the linear part, which every `KEYS` pays in any
/// case): a unit is a token compared, a nanosecond or less.
pub(crate) struct Work {
    left: u64,
}

impl Work {
    /// What one command may spend matching: about a second of one core.
    /// Only middle segments with wildcards spend anything.
    pub(crate) const LIMIT: u64 = 1 << 31;

    /// A budget of `units`.
    pub(crate) fn new(units: u64) -> Work {
        Work { left: units }
    }

    /// Spends `units`; an error, spending nothing, where fewer are left.
    fn spend(&mut self, units: u64) -> Result<(), TooComplex> {
        self.left = self.left.checked_sub(units).ok_or(TooComplex)?;
        Ok(())
    }
}

/// A match that would have taken more than its [`Work`] allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooComplex;

impl TooComplex {
    /// The error a command answers with.
    pub(crate) const MESSAGE: &'static str =
        "ERR pattern too complex: matching it against these keys would take too long";
}

/// A run of tokens between two `*` (or a `*` and an end of the pattern).
struct Segment {
    /// Its tokens; empty where a `*` starts or ends the pattern.
    toks: Vec<Tok>,
    /// Its bytes, where every token is a byte: searched for with `memmem`.
    plain: Option<Vec<u8>>,
}

/// A pattern, compiled for matching many names.
pub(crate) struct Glob {
    /// The segments, in order: the whole pattern when it has no `*`, else
    /// the first, the middle ones (none empty) and the last.
    segments: Vec<Segment>,
    /// The classes [`Tok::Class`] names, each once.
    sets: Vec<Set>,
    /// Tokens that are not `*`: the bytes every match has.
    fixed: usize,
    /// An upper bound on the work a name costs, per byte of it: 1, and the
    /// length of each middle segment compared at each position.
    per_byte: u64,
}

impl Glob {
    /// Compiles `pattern`.
    pub(crate) fn new(pattern: &[u8]) -> Glob {
        let mut sets = Vec::new();
        let mut known: HashMap<Set, u32> = HashMap::new();
        let mut runs: Vec<Vec<Tok>> = vec![Vec::new()];
        let mut p = 0;
        while p < pattern.len() {
            let (tok, next) = match pattern[p] {
                b'*' => {
                    // A run of `*` is one: it opens one segment.
                    if runs.len() == 1 || runs.last().is_some_and(|r| !r.is_empty()) {
                        runs.push(Vec::new());
                    }
                    p += 1;
                    continue;
                }
                b'?' => (Tok::Any, p + 1),
                b'[' => {
                    let (set, next) = class_set(pattern, p);
                    let tok = match set.iter().map(|w| w.count_ones()).sum::<u32>() {
                        256 => Tok::Any,
                        // One byte: a plain byte, so that its segment can be
                        // searched for as bytes.
                        1 => Tok::Byte((0..=255u8).find(|&c| has(&set, c)).unwrap_or(0)),
                        _ => Tok::Class(*known.entry(set).or_insert_with(|| {
                            sets.push(set);
                            (sets.len() - 1) as u32
                        })),
                    };
                    (tok, next)
                }
                b'\\' if p + 1 < pattern.len() => (Tok::Byte(pattern[p + 1]), p + 2),
                c => (Tok::Byte(c), p + 1),
            };
            runs.last_mut().expect("one segment at least").push(tok);
            p = next;
        }
        let segments: Vec<Segment> = runs
            .into_iter()
            .map(|toks| {
                let plain = toks
                    .iter()
                    .map(|&t| match t {
                        Tok::Byte(b) => Some(b),
                        _ => None,
                    })
                    .collect();
                Segment { toks, plain }
            })
            .collect();
        let fixed = segments.iter().map(|s| s.toks.len()).sum();
        let middles = segments.get(1..segments.len() - 1).unwrap_or_default();
        let per_byte = middles
            .iter()
            .filter(|s| s.plain.is_none())
            .fold(1u64, |sum, s| sum.saturating_add(s.toks.len() as u64));
        Glob {
            segments,
            sets,
            fixed,
            per_byte,
        }
    }

    /// Whether `text` matches, spending the search's work from `work`: the
    /// anchored segments, then each middle one at its leftmost place after
    /// the one before.
    pub(crate) fn matches(&self, text: &[u8], work: &mut Work) -> Result<bool, TooComplex> {
        let n = text.len();
        if n < self.fixed {
            return Ok(false);
        }
        let (first, rest) = self.segments.split_first().expect("one segment at least");
        let Some((last, middles)) = rest.split_last() else {
            return Ok(n == self.fixed && self.fits(&first.toks, text));
        };
        let (head, tail) = (first.toks.len(), last.toks.len());
        if !self.fits(&first.toks, &text[..head]) || !self.fits(&last.toks, &text[n - tail..]) {
            return Ok(false);
        }
        let mut hay = &text[head..n - tail];
        for seg in middles {
            match self.find(seg, hay, work)? {
                Some(at) => hay = &hay[at + seg.toks.len()..],
                None => return Ok(false),
            }
        }
        Ok(true)
    }

    /// An upper bound, in [`Work`]'s units and counting the linear part
    /// too, on what matching `text` costs: for deciding where to run it.
    pub(crate) fn cost(&self, text: &[u8]) -> u64 {
        if text.len() < self.fixed {
            return 1;
        }
        (text.len() as u64)
            .saturating_mul(self.per_byte)
            .saturating_add(16)
    }

    /// Whether token `tok` matches byte `c`.
    fn accepts(&self, tok: Tok, c: u8) -> bool {
        match tok {
            Tok::Byte(b) => b == c,
            Tok::Any => true,
            Tok::Class(i) => has(&self.sets[i as usize], c),
        }
    }

    /// Whether `toks` match `text`, of the same length.
    fn fits(&self, toks: &[Tok], text: &[u8]) -> bool {
        toks.iter().zip(text).all(|(&t, &c)| self.accepts(t, c))
    }

    /// Where `seg` (not empty) first occurs in `hay`: by `memmem` where it
    /// is plain, else by comparing at each place, the tokens compared spent
    /// from `work`.
    fn find(
        &self,
        seg: &Segment,
        hay: &[u8],
        work: &mut Work,
    ) -> Result<Option<usize>, TooComplex> {
        if let Some(plain) = &seg.plain {
            return Ok(memchr::memmem::find(hay, plain));
        }
        let m = seg.toks.len();
        for start in 0..(hay.len() + 1).saturating_sub(m) {
            let same = seg
                .toks
                .iter()
                .zip(&hay[start..])
                .take_while(|&(&t, &c)| self.accepts(t, c))
                .count();
            work.spend(same as u64)?;
            if same == m {
                return Ok(Some(start));
            }
        }
        Ok(None)
    }
}

/// Whether `text` matches `pattern`, with no budget. For short texts such
/// as parameter names; key names go through [`Glob`] and a [`Work`] budget.
pub(crate) fn glob(pattern: &[u8], text: &[u8]) -> bool {
    Glob::new(pattern)
        .matches(text, &mut Work::new(u64::MAX))
        .unwrap_or(false)
}

/// Whether set `s` holds `c`.
fn has(s: &Set, c: u8) -> bool {
    s[usize::from(c >> 6)] >> (c & 63) & 1 == 1
}

/// The bytes of the class that opens at `pattern[at]`, and the index after
/// it (the pattern's end where it is left open).
fn class_set(pattern: &[u8], at: usize) -> (Set, usize) {
    let mut set = [0u64; 4];
    let mut add = |lo: u8, hi: u8| {
        for c in lo..=hi {
            set[usize::from(c >> 6)] |= 1 << (c & 63);
        }
    };
    let mut i = at + 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    while i < pattern.len() && pattern[i] != b']' {
        if pattern[i] == b'\\' && i + 1 < pattern.len() {
            add(pattern[i + 1], pattern[i + 1]);
            i += 2;
        } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' && pattern[i + 2] != b']' {
            let (a, b) = (pattern[i], pattern[i + 2]);
            add(a.min(b), a.max(b));
            i += 3;
        } else {
            add(pattern[i], pattern[i]);
            i += 1;
        }
    }
    if negate {
        set = set.map(|w| !w);
    }
    (set, (i + 1).min(pattern.len()))
}

#[cfg(test)]
mod tests {
    use super::{glob, Glob, TooComplex, Work};

    /// The reference: a simple matcher that reads the pattern as written,
    /// going back to the last `*` on a mismatch, and reads each class again
    /// for every byte it is tried on.
    fn reference(pattern: &[u8], text: &[u8]) -> bool {
        let (mut p, mut t) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            let step = match pattern.get(p) {
                Some(b'*') => {
                    star = Some((p + 1, t));
                    p += 1;
                    continue;
                }
                Some(b'?') => Some(p + 1),
                Some(b'[') => reference_class(pattern, p, text[t]),
                Some(b'\\') if p + 1 < pattern.len() => {
                    (pattern[p + 1] == text[t]).then_some(p + 2)
                }
                Some(&c) => (c == text[t]).then_some(p + 1),
                None => None,
            };
            match (step, star) {
                (Some(next), _) => {
                    p = next;
                    t += 1;
                }
                (None, Some((sp, st))) => {
                    p = sp;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                (None, None) => return false,
            }
        }
        pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
    }

    fn reference_class(pattern: &[u8], at: usize, c: u8) -> Option<usize> {
        let mut i = at + 1;
        let negate = pattern.get(i) == Some(&b'^');
        if negate {
            i += 1;
        }
        let mut matched = false;
        while i < pattern.len() && pattern[i] != b']' {
            if pattern[i] == b'\\' && i + 1 < pattern.len() {
                matched |= pattern[i + 1] == c;
                i += 2;
            } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' && pattern[i + 2] != b']' {
                let (lo, hi) = (
                    pattern[i].min(pattern[i + 2]),
                    pattern[i].max(pattern[i + 2]),
                );
                matched |= (lo..=hi).contains(&c);
                i += 3;
            } else {
                matched |= pattern[i] == c;
                i += 1;
            }
        }
        (matched != negate).then_some((i + 1).min(pattern.len()))
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
        }

        fn pick(&mut self, from: &[u8], len: usize) -> Vec<u8> {
            (0..len).map(|_| from[self.below(from.len())]).collect()
        }
    }

    /// Checks that every way of matching agrees with the reference on
    /// `pattern` and `text`; whether they match.
    fn agrees(pattern: &[u8], text: &[u8]) -> bool {
        let expected = reference(pattern, text);
        assert_eq!(
            all_ways(pattern, text),
            [expected; 2],
            "{:?} {:?}",
            String::from_utf8_lossy(pattern),
            String::from_utf8_lossy(text)
        );
        expected
    }

    /// The two ways a pattern is matched: compiled with no budget, and
    /// through [`glob`] (as `CONFIG GET` does).
    fn all_ways(pattern: &[u8], text: &[u8]) -> [bool; 2] {
        let work = &mut Work::new(u64::MAX);
        [
            Glob::new(pattern).matches(text, work).unwrap(),
            glob(pattern, text),
        ]
    }

    #[test]
    fn globs() {
        for (p, t, m) in [
            ("*", "", true),
            ("*", "abc", true),
            ("", "", true),
            ("", "a", false),
            ("a*", "abc", true),
            ("a*c", "abbbc", true),
            ("a*c", "abbb", false),
            ("h?llo", "hello", true),
            ("h[ae]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("*b*", "aaa", false),
            ("a\\*", "a*", true),
            ("a\\*", "ab", false),
            ("[", "a", false),
            ("a\\", "a\\", true),
            ("*[]*", "]", false),
            ("[^]", "x", true),
            ("[z-a]", "m", true),
            ("[a-]", "-", true),
            ("[\\]]", "]", true),
            ("*ab*ab*", "abab", true),
            ("*ab*ab*", "aba", false),
            ("*a?c*", "xxabcxx", true),
            ("**a**", "a", true),
            ("k[0-9][0-9]", "k42", true),
            ("k[0-9][0-9]", "k4x", false),
        ] {
            let expected = [m; 2];
            assert_eq!(all_ways(p.as_bytes(), t.as_bytes()), expected, "{p} {t}");
            assert_eq!(reference(p.as_bytes(), t.as_bytes()), m, "{p} {t}");
        }
    }

    /// Short random patterns and texts over a few bytes, the pattern's
    /// own among them, against the reference.
    #[test]
    fn short_patterns_match_as_the_reference_does() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300_000 {
            let pattern = {
                let len = rng.below(11);
                rng.pick(b"ab*?[]^-\\", len)
            };
            let text = {
                let len = rng.below(13);
                rng.pick(b"ab]-^\\*", len)
            };
            agrees(&pattern, &text);
        }
    }

    /// Long texts and patterns cut from them (so that they often match),
    /// with long segments of plain bytes, `?` and classes.
    #[test]
    fn long_segments_match_as_the_reference_does() {
        let mut rng = Rng(42);
        let mut matched = 0;
        for _ in 0..3_000 {
            let text = {
                let len = 50 + rng.below(400);
                rng.pick(b"aab", len)
            };
            // Segments cut from the text in order, from its start and to its
            // end where the pattern is anchored there.
            let segments = 1 + rng.below(4);
            let mut cuts: Vec<usize> = (0..2 * segments)
                .map(|_| rng.below(text.len() + 1))
                .collect();
            cuts.sort_unstable();
            let (anchor_start, anchor_end) = (rng.below(2) == 0, rng.below(2) == 0);
            if anchor_start {
                cuts[0] = 0;
            }
            if anchor_end {
                cuts[2 * segments - 1] = text.len();
            }
            let mut pattern = Vec::new();
            if !anchor_start {
                pattern.push(b'*');
            }
            for (i, cut) in cuts.chunks(2).enumerate() {
                if i > 0 {
                    pattern.push(b'*');
                }
                // Now and then a byte the text does not have there.
                let stray = (rng.below(3) == 0).then(|| cut[0] + rng.below(cut[1] - cut[0] + 1));
                for (at, &c) in text.iter().enumerate().take(cut[1]).skip(cut[0]) {
                    if stray == Some(at) {
                        pattern.push(b'b');
                    }
                    match rng.below(12) {
                        0 => pattern.push(b'?'),
                        1 => pattern.extend_from_slice(b"[ab]"),
                        2 if c == b'a' => pattern.extend_from_slice(b"[^b]"),
                        _ => pattern.push(c),
                    }
                }
            }
            if !anchor_end {
                pattern.push(b'*');
            }
            matched += usize::from(agrees(&pattern, &text));
        }
        assert!(matched > 1_000, "{matched} matched");
    }

    /// A long plain segment against a long name: linear, not the product
    /// of their lengths (which took the reference seconds at these sizes).
    #[test]
    fn long_plain_segments_take_linear_time() {
        let text = vec![b'a'; 400_000];
        for tail in ["b", "b*", "ba*"] {
            let pattern = [&b"*"[..], &[b'a'; 200_000], tail.as_bytes()].concat();
            let glob = Glob::new(&pattern);
            let work = &mut Work::new(u64::MAX);
            let started = std::time::Instant::now();
            assert_eq!(glob.matches(&text, work), Ok(false), "{tail}");
            assert!(
                started.elapsed().as_secs() < 5,
                "{tail}: {:?}",
                started.elapsed()
            );
        }
        let pattern = [&b"*"[..], &[b'a'; 200_000], b"*"].concat();
        let glob = Glob::new(&pattern);
        assert_eq!(glob.matches(&text, &mut Work::new(u64::MAX)), Ok(true));
    }

    /// Search work past the budget fails the match, rather than run on.
    #[test]
    fn work_past_the_budget_is_refused() {
        let text = vec![b'a'; 20_000];
        let pattern = [&b"*"[..], &[b'a'; 5_000], b"?b*"].concat();
        let glob = Glob::new(&pattern);
        assert_eq!(
            glob.matches(&text, &mut Work::new(1_000_000)),
            Err(TooComplex)
        );
        assert_eq!(glob.matches(&text, &mut Work::new(u64::MAX)), Ok(false));
        // A segment of 5,002 tokens spends at most that much a byte.
        assert!(glob.cost(&text) <= 20_000 * 5_003 + 16);
    }
}
