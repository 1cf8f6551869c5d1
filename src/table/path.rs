//! Cuckoo paths: when both buckets of a new item are full, find the shortest
//! chain of displacements that ends in an empty slot, then apply it from its far
//! end (MemC3 / libcuckoo).
//!
//! The search only reads. Applying moves the last fingerprint of the path into
//! the empty slot first, then the one before it into the slot just freed, and so
//! on back to the item's own bucket; each move is copy-then-clear
//! ([`Table::relocate`]), so every fingerprint is findable at every instant and
//! a path abandoned halfway leaves only valid relocations behind. Nothing is
//! ever evicted: there is no victim slot and no random walk that drops an item.

use std::cell::Cell;

use super::front::View;
use super::{BucketWords, Position, Reach, Table};
use crate::fingerprint::Width;

/// Most displacements in one path. Five reaches more than 95 % load with
/// buckets of four (MemC3 and libcuckoo use the same bound).
pub(crate) const MAX_DEPTH: u8 = 5;

/// Most buckets one search reads. The full tree of depth 5 from two roots has
/// 2730 nodes with buckets of four (more with five or six); the bound keeps
/// the worst-case insert near 2000 bucket reads (and the thread's node list
/// at 80 KiB).
pub(crate) const MAX_NODES: usize = 2048;

/// Searches that find no path before an insert reports the table full. A
/// search reads a moving table, so one miss may be the table changing under it;
/// two in a row is "full".
const FRUITLESS_SEARCHES: u32 = 2;

/// A bucket reached by the search.
#[derive(Clone, Copy, Debug)]
struct Node {
    bucket: u64,
    /// The bucket's words as the search read them (zero until it did): its
    /// expansion moves the fingerprints they hold.
    words: BucketWords,
    /// The fingerprint that would move from the parent's bucket into this one.
    fp: u32,
    /// Index of the parent node (unused for roots).
    parent: u16,
    /// Displacements from the root: 0 for the item's own buckets.
    depth: u8,
}

/// One displacement: a copy of `fp` moves from `src` to `dst` (by value, see
/// [`Table::relocate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) src: u64,
    pub(crate) fp: u32,
    pub(crate) dst: u64,
}

/// A path: the root bucket the new item will go to, and the displacements that
/// free a slot in it, in order from the root outwards. Held inline: a search
/// that finds a path allocates nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Path {
    pub(crate) root: u64,
    /// `steps[..len]` are the path's; the rest are unused.
    steps: [Step; MAX_DEPTH as usize],
    len: u8,
}

impl Path {
    /// The displacements, from the root outwards.
    pub(crate) fn steps(&self) -> &[Step] {
        &self.steps[..usize::from(self.len)]
    }
}

thread_local! {
    /// The search's node list, kept by each thread from one search to the
    /// next: a deep search fills up to [`MAX_NODES`] (64 KiB), and allocating
    /// and freeing that for every insert that needed a path cost about 6 % of
    /// a mixed workload on a table at 90 % load. A search takes the list out
    /// of the cell and puts it back, so that a search that finds the cell
    /// empty (one running inside another on the same thread, as loom's
    /// threads do, or one after the thread's destructors ran) allocates its
    /// own instead.
    static NODES: Cell<Vec<Node>> = const { Cell::new(Vec::new()) };
}

/// Inserts the fingerprint of `pos` by searching for and applying cuckoo paths.
/// True on success. False once `FRUITLESS_SEARCHES` searches in a row found no
/// path; a path that fails midway (the table changed: another operation made
/// progress) is searched again without counting as fruitless.
///
/// `roots`: the words of the item's two buckets, as the caller read them,
/// if it did; the first search starts from those instead of reading
/// the buckets again.
pub(crate) fn insert<W: Width>(
    table: &Table<W>,
    pos: Position,
    roots: Option<Roots>,
) -> Result<(), NoPath> {
    let put = |root: u64| {
        if table.put(root, pos.fp) {
            RootPut::Put
        } else {
            RootPut::Full
        }
    };
    insert_with(table, pos, roots, put).map(drop)
}

/// Why [`insert_with`] found no path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoPath {
    /// Every search saw the whole table: as far as they could tell, no
    /// path ends in an empty slot.
    Full,
    /// Some search left out moves across a snapshot's front: a path may
    /// have existed that a snapshot kept it from taking.
    Fronts,
}

/// The words of an item's two buckets (its first, then its second), as
/// read before a search (see [`insert`]).
pub(crate) type Roots = [BucketWords; 2];

/// What the final put of a path did (see [`insert_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RootPut {
    /// Put the fingerprint into the root bucket: the insert is done.
    Put,
    /// Put nothing, and the insert is done: the fingerprint was found
    /// (`insert_if_absent`).
    Present,
    /// Put nothing: the root bucket filled up again; search again.
    Full,
}

/// [`insert`] with the final put of each path done by `put(root)`: `Put` or
/// `Present` ends the insert with that answer, `Full` (the table changed)
/// searches again. An error once `FRUITLESS_SEARCHES` searches in a row found
/// no path: [`NoPath::Fronts`] if any search of this insert left out moves
/// across a snapshot's front.
pub(crate) fn insert_with<W: Width>(
    table: &Table<W>,
    pos: Position,
    mut roots: Option<Roots>,
    put: impl Fn(u64) -> RootPut,
) -> Result<RootPut, NoPath> {
    let mut fruitless = 0;
    let mut restricted = false;
    loop {
        let (found, fronts) = search(table, pos, roots.take());
        restricted |= fronts;
        match found {
            Some(path) => {
                match apply(table, &path, &put) {
                    Some(RootPut::Full) | None => {}
                    Some(done) => return Ok(done),
                }
                fruitless = 0;
            }
            None => {
                fruitless += 1;
                if fruitless == FRUITLESS_SEARCHES {
                    return Err(if restricted {
                        NoPath::Fronts
                    } else {
                        NoPath::Full
                    });
                }
            }
        }
    }
}

/// Breadth-first search from both buckets of `pos` for the nearest bucket with
/// an empty slot. Reads only. Each path is simple (no bucket twice), so without
/// interference it always applies.
///
/// While a snapshot runs, the search leaves out every move across its front:
/// backward ones a mover would undo, and forward ones, which would show the
/// item to the snapshot twice (see `front::may_complete`). Taking forward
/// moves where nothing else is found makes fewer inserts near full fail
/// during a snapshot (a third fewer at 95 % load), but puts dozens of extra
/// copies in each snapshot of a million items, against a handful.
///
/// `roots`, if given, are the words of the two buckets of `pos` as the
/// caller read them: the search takes them as its reads of those.
///
/// Also returns whether a snapshot was under way when it began (its moves
/// then kept their side of the fronts).
pub(crate) fn search<W: Width>(
    table: &Table<W>,
    pos: Position,
    roots: Option<Roots>,
) -> (Option<Path>, bool) {
    let mut nodes = NODES.try_with(Cell::take).unwrap_or_default();
    let fronts = table.front_view();
    nodes.clear();
    let path = search_in(table, pos, roots, &fronts, &mut nodes);
    // Dropped instead if the thread's cell is gone.
    let _ = NODES.try_with(|cell| cell.set(nodes));
    (path, !fronts.is_empty())
}

/// Nodes the search keeps queued, requested from memory, ahead of the one
/// it reads, once past the roots' children (which are all queued at once):
/// enough to cover a miss to memory with the work of reading and expanding
/// the nodes before it, few enough that little of that work is thrown
/// away when a search ends.
const AHEAD: usize = 4;

/// [`search`], its nodes kept in `nodes` (empty on entry).
///
/// Breadth first, in one queue: nodes are read in the order they were
/// queued, and a node is expanded (its alternates computed, checked
/// against its ancestors, requested from memory and queued) only after it
/// was read. The two roots are expanded as soon as both are read, so that
/// the misses of all their children (many searches near full end among
/// them) overlap; every later node only while fewer than [`AHEAD`] nodes
/// wait to be read. A search ends at the first bucket with a free slot, so
/// the nodes queued beyond it are work thrown away: expanding lazily keeps
/// those to a few, where expanding whole levels would queue two to three
/// times the nodes read. The order of reads is that of a search that
/// expands each node as it reads it, so the path found is the same; each
/// bucket is read once, and expanded from the words that read saw.
///
/// Moves across a front in `fronts` are left out (see [`search`]).
fn search_in<W: Width>(
    table: &Table<W>,
    pos: Position,
    roots: Option<Roots>,
    fronts: &View,
    nodes: &mut Vec<Node>,
) -> Option<Path> {
    debug_assert_ne!(pos.i1, pos.i2, "an item's buckets are distinct");
    let read_roots = roots.unwrap_or_default();
    for (root, words) in [pos.i1, pos.i2].into_iter().zip(read_roots) {
        nodes.push(Node {
            bucket: root,
            words,
            fp: 0,
            parent: 0,
            depth: 0,
        });
    }
    // The roots first: read (unless the caller did), then both expanded at
    // once, so that the misses of all their children start together.
    for read in 0..2 {
        let node = &mut nodes[read];
        if roots.is_none() {
            node.words = table.load_bucket(node.bucket);
        }
        if table.free_slots(&node.words, node.bucket) != 0 {
            return Some(trace(nodes, read));
        }
    }
    expand(table, fronts, nodes, 0);
    expand(table, fronts, nodes, 1);
    let mut expanded = 2;
    for read in 2.. {
        // Queue children while fewer than `AHEAD` wait beyond this read; a
        // node can be expanded once it was read.
        while nodes.len() < read + AHEAD && expanded < read {
            expand(table, fronts, nodes, expanded);
            expanded += 1;
        }
        let node = nodes.get_mut(read)?;
        node.words = table.load_bucket(node.bucket);
        if table.free_slots(&node.words, node.bucket) != 0 {
            return Some(trace(nodes, read));
        }
    }
    None
}

/// Queues the children of `nodes[head]` (read already): for each
/// fingerprint it holds, the bucket that fingerprint would move to, unless
/// that is the bucket itself or one of its ancestors, the bucket the
/// fingerprint in the slot before leads to, or a move across a front of
/// `fronts`. A node at [`MAX_DEPTH`] has none, and none are queued past
/// [`MAX_NODES`].
///
/// Two children of one node in one bucket have the same ancestors, so the
/// same subtree: the second would only repeat the first's reads. Copies of
/// one fingerprint (an item inserted again and again) all lead to one
/// bucket and lie side by side where the layout keeps a bucket sorted or
/// where they were put one after another; without the check, a bucket full
/// of them queues four copies of one subtree at each level. Only the slot
/// before is compared: one compare a slot costs nothing measurable, where
/// comparing every earlier sibling slows inserts near full.
fn expand<W: Width>(table: &Table<W>, fronts: &View, nodes: &mut Vec<Node>, head: usize) {
    let Node {
        bucket,
        words,
        depth,
        ..
    } = nodes[head];
    if depth == MAX_DEPTH {
        return;
    }
    // The bucket the slot before led to (none yet: no bucket is u64::MAX).
    let mut previous = u64::MAX;
    for &fp in &table.bucket_fingerprints(&words, bucket)[..W::SLOTS as usize] {
        if nodes.len() == MAX_NODES {
            return;
        }
        let child = table.alternate(bucket, fp);
        let repeated = child == previous;
        previous = child;
        if !repeated && !on_path(nodes, head, child) && table.view_allows(fronts, bucket, child) {
            // Read a few nodes later; start the miss now.
            table.prefetch_bucket(child, Reach::Next);
            nodes.push(Node {
                bucket: child,
                words: [0; 2],
                fp,
                parent: head as u16,
                depth: depth + 1,
            });
        }
    }
}

/// Whether `bucket` is `nodes[index]` or one of its ancestors.
fn on_path(nodes: &[Node], mut index: usize, bucket: u64) -> bool {
    loop {
        let node = &nodes[index];
        if node.bucket == bucket {
            return true;
        }
        if node.depth == 0 {
            return false;
        }
        index = node.parent as usize;
    }
}

/// The path from the root of `nodes[target]` to it.
fn trace(nodes: &[Node], target: usize) -> Path {
    let unused = Step {
        src: 0,
        fp: 0,
        dst: 0,
    };
    let mut steps = [unused; MAX_DEPTH as usize];
    let len = nodes[target].depth;
    let mut index = target;
    // The node at depth `d` is reached by step `d - 1`.
    while nodes[index].depth > 0 {
        let node = nodes[index];
        let parent = nodes[node.parent as usize];
        steps[usize::from(node.depth) - 1] = Step {
            src: parent.bucket,
            fp: node.fp,
            dst: node.bucket,
        };
        index = node.parent as usize;
    }
    Path {
        root: nodes[index].bucket,
        steps,
        len,
    }
}

/// Applies `path` from its far end, then calls `put` on the freed root
/// bucket. `None` as soon as the table no longer matches the path; moves
/// already made stay (each is a valid relocation).
pub(crate) fn apply<W: Width>(
    table: &Table<W>,
    path: &Path,
    put: impl Fn(u64) -> RootPut,
) -> Option<RootPut> {
    path.steps()
        .iter()
        .rev()
        .all(|s| table.relocate(s.src, s.fp, s.dst))
        .then(|| put(path.root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::W16;

    #[test]
    fn finds_shortest_path_and_applies_it() {
        let t = Table::<W16>::new(16).unwrap();
        // Fill the two buckets of a new item, then check that the search finds a
        // one-step path and that applying it keeps every fingerprint.
        let pos = t.position(0x0123_4567_89ab_cdef);
        let mut fps = Vec::new();
        let mut fp = 1;
        for b in [pos.i1, pos.i2] {
            while t.put(b, fp) {
                fps.push((b, fp));
                fp += 1;
            }
        }
        let path = search(&t, pos, None)
            .0
            .expect("plenty of room one step away");
        assert_eq!(path.steps().len(), 1);
        let put = |root| {
            if t.put(root, pos.fp) {
                RootPut::Put
            } else {
                RootPut::Full
            }
        };
        assert_eq!(apply(&t, &path, put), Some(RootPut::Put));
        let mut seen = Vec::new();
        t.for_each_fingerprint(|b, f| seen.push((b, f)));
        assert_eq!(seen.len(), fps.len() + 1);
        // Every old fingerprint is still in one of its own two buckets.
        for (b, f) in fps {
            assert!(seen.contains(&(b, f)) || seen.contains(&(t.alternate(b, f), f)));
        }
        assert!(seen.contains(&(pos.i1, pos.fp)) || seen.contains(&(pos.i2, pos.fp)));
    }

    #[test]
    fn on_path_sees_ancestors() {
        let nodes = [
            Node {
                bucket: 7,
                fp: 0,
                parent: 0,
                depth: 0,
                words: [0; 2],
            },
            Node {
                bucket: 9,
                fp: 1,
                parent: 0,
                depth: 1,
                words: [0; 2],
            },
            Node {
                bucket: 3,
                fp: 2,
                parent: 1,
                depth: 2,
                words: [0; 2],
            },
        ];
        assert!(on_path(&nodes, 2, 7));
        assert!(on_path(&nodes, 2, 3));
        assert!(!on_path(&nodes, 1, 3));
    }

    #[test]
    fn copies_of_one_fingerprint_are_one_child() {
        // A full table whose first bucket of the item holds four copies of
        // one fingerprint: a search queues one child for them.
        let t = Table::<W16>::new(64).unwrap();
        let pos = t.position(0x0123_4567_89ab_cdef);
        for _ in 0..4 {
            assert!(t.put(pos.i1, 0x1234));
        }
        let mut next = crate::test_rng::xorshift(7);
        for b in 0..64 {
            while t.put(b, (next() as u32 & 0xffff).max(1)) {}
        }
        let mut nodes = Vec::new();
        let found = search_in(&t, pos, None, &t.front_view(), &mut nodes);
        assert!(found.is_none(), "the table is full");
        let children_of_first = nodes
            .iter()
            .filter(|n| n.depth == 1 && n.parent == 0)
            .count();
        assert_eq!(children_of_first, 1);
    }

    /// The fewest displacements that free a slot in a bucket of `pos`, by
    /// brute force over every simple path (no bucket twice) of at most
    /// [`MAX_DEPTH`] steps, independent of `search`'s node list.
    fn fewest_steps(t: &Table<W16>, pos: Position) -> Option<usize> {
        let fps = |b: u64| t.bucket_fingerprints(&t.load_bucket(b), b)[..4].to_vec();
        let mut paths: Vec<Vec<u64>> = vec![vec![pos.i1]];
        if pos.i2 != pos.i1 {
            paths.push(vec![pos.i2]);
        }
        for steps in 0..=usize::from(MAX_DEPTH) {
            if paths.iter().any(|p| fps(*p.last().unwrap()).contains(&0)) {
                return Some(steps);
            }
            let mut longer = Vec::new();
            for p in &paths {
                let end = *p.last().unwrap();
                for fp in fps(end) {
                    let next = t.alternate(end, fp);
                    if !p.contains(&next) {
                        longer.push([p.as_slice(), &[next]].concat());
                    }
                }
            }
            paths = longer;
        }
        None
    }

    #[test]
    fn search_finds_a_path_with_the_fewest_steps() {
        // Small, nearly full tables: free slots are few, so the nearest one is
        // often several steps away, and sometimes the first bucket of its
        // level. Up to four steps the search cannot hit MAX_NODES (2 + 8 +
        // ... + 512 = 682 buckets), so it must find a path exactly as short.
        let mut next = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut lengths = [0; MAX_DEPTH as usize + 1];
        for _ in 0..200 {
            // Every bucket full of random fingerprints but for a free slot in
            // each of three random buckets (put directly: any fingerprint in
            // any bucket is some item's).
            let t = Table::<W16>::new(32).unwrap();
            let free = [next() % 32, next() % 32, next() % 32];
            for b in 0..32 {
                let keep = 4 - free.iter().filter(|&&f| f == b).count().min(1);
                for _ in 0..keep {
                    assert!(t.put(b, (next() as u32 & 0xffff).max(1)));
                }
            }
            for _ in 0..20 {
                let pos = t.position(next());
                let fewest = fewest_steps(&t, pos);
                let found = search(&t, pos, None).0.map(|p| p.steps().len());
                if fewest.is_some_and(|n| n <= 4) {
                    assert_eq!(found, fewest, "search from {pos:?}");
                    lengths[fewest.unwrap()] += 1;
                }
            }
        }
        // The table shape gives every length up to four.
        assert!(lengths[..5].iter().all(|&n| n > 0), "{lengths:?}");
    }
}
