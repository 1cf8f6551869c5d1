//! One pointer to an immutable value that is replaced, never mutated, and that
//! readers use without locks and without pinning: the growable filter's chain
//! of tables.
//!
//! # Replaced values are kept until the pointer is dropped
//!
//! A reader loads the pointer and reads the value; nothing tells a replacing
//! thread when the last reader is done with the old value. An epoch scheme
//! (`crossbeam-epoch`) answers that by having every reader pin itself, which
//! costs a sequentially consistent read-modify-write per operation: a full
//! barrier, so no cache miss of the next operation can start under it. On the
//! growable filter that pin was half the cost of a lookup (grown to 4 M items,
//! misses 5.6 -> 8.3 M/s without it) and a third of an insert's.
//!
//! Here nothing is reclaimed before the pointer itself is dropped. Each value
//! sits in a node that also owns the node it replaced, so the values ever
//! published form a list from the current one back to the first, freed
//! together on drop. That is the right trade only where replacements are few
//! and small: the growable filter replaces its chain once per growth, fewer than 33
//! times in its life, and a chain is an array of at most
//! that many pointers, so all kept chains together are a few KiB.
//!
//! # Orderings
//!
//! A successful replacement is Release (the new value, and the link to the
//! node it replaces, are written before it), every load Acquire: a thread that
//! loads a node sees its value complete.
//!
//! # Under loom
//!
//! The same code runs under loom, with loom's `AtomicPtr` (through
//! [`crate::sync`]) and loom's `UnsafeCell` around the value, so loom checks
//! the publication itself: a read of a value that its write does not
//! happen-before is reported as a causality violation.

use std::ops::Deref;

use crate::sync::{AtomicPtr, Ordering};
use cell::UnsafeCell;

/// The value of a node: loom's `UnsafeCell` under loom, which checks that the
/// write happens-before every read; a plain wrapper with the same interface
/// otherwise.
#[cfg(lockfree_cuckoo_filter_loom)]
mod cell {
    pub(super) use loom::cell::UnsafeCell;
}

#[cfg(not(lockfree_cuckoo_filter_loom))]
mod cell {
    /// The interface of loom's `UnsafeCell` that [`super`] uses, over a value
    /// that is never written after creation.
    pub(super) struct UnsafeCell<T>(T);

    impl<T> UnsafeCell<T> {
        pub(super) fn new(value: T) -> Self {
            Self(value)
        }

        #[inline(always)]
        pub(super) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(&self.0)
        }

        pub(super) fn into_inner(self) -> T {
            self.0
        }
    }
}

/// A published value and the node it replaced (null for the first), which
/// this node owns from the moment it is published.
struct Node<T> {
    value: UnsafeCell<T>,
    replaced: *mut Node<T>,
}

/// A value of a [`Published`] as loaded: alive as long as the `Published`
/// is borrowed.
pub(crate) struct Current<'a, T> {
    node: *mut Node<T>,
    value: &'a T,
}

impl<T> Clone for Current<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Current<'_, T> {}

impl<T> Current<'_, T> {
    /// Whether both are the same published value (not merely equal ones).
    #[inline]
    pub(crate) fn same(self, other: Self) -> bool {
        self.node == other.node
    }
}

impl<'a, T> Current<'a, T> {
    /// The values this one replaced, newest first: kept as long as the
    /// [`Published`] it was loaded from.
    pub(crate) fn replaced(self) -> impl Iterator<Item = &'a T> {
        let mut node = self.node;
        std::iter::from_fn(move || {
            // SAFETY: `node` is this value's node or one it (transitively)
            // replaced. Each link is written before its node is published and
            // never after, so the Acquire that made this value visible made
            // its link visible too; the node a link names was published before
            // the node holding the link, and nodes are freed only when the
            // `Published`, borrowed for `'a`, is dropped.
            node = unsafe { (*node).replaced };
            if node.is_null() {
                return None;
            }
            // SAFETY: as above: published before this value, alive for `'a`.
            Some(unsafe { (*node).value.with(|p| &*p) })
        })
    }
}

impl<T> Deref for Current<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        self.value
    }
}

/// An atomic pointer to a `T` that is replaced by compare-and-swap; see the
/// module documentation.
pub(crate) struct Published<T> {
    /// The current node; never null. Every node it ever held is reachable
    /// from the current one through `replaced`.
    head: AtomicPtr<Node<T>>,
}

// SAFETY: a `Published` owns its nodes (sent with it) and shares their values
// only as `&T` (so `T: Sync` for sharing, `T: Send` for dropping on another
// thread); the raw pointers are what make the auto traits opt out.
unsafe impl<T: Send + Sync> Send for Published<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for Published<T> {}

fn boxed<T>(value: T, replaced: *mut Node<T>) -> *mut Node<T> {
    Box::into_raw(Box::new(Node {
        value: UnsafeCell::new(value),
        replaced,
    }))
}

impl<T> Published<T> {
    /// A pointer to `value`.
    pub(crate) fn new(value: T) -> Self {
        Self {
            head: AtomicPtr::new(boxed(value, std::ptr::null_mut())),
        }
    }

    /// Wraps a node loaded from `head`.
    ///
    /// # Safety
    ///
    /// `node` was loaded from `self.head` by an Acquire load or a successful
    /// compare-and-swap (which published it).
    #[inline(always)]
    unsafe fn current(&self, node: *mut Node<T>) -> Current<'_, T> {
        // SAFETY: every node `head` ever held is freed only by `drop`, which
        // takes `&mut self`, so it outlives this borrow of `self`; its value is
        // never written after `boxed`, and that write happens-before this read
        // (the caller's load synchronises with the Release that published it).
        let value = unsafe { (*node).value.with(|p| &*p) };
        Current { node, value }
    }

    /// The current value. Acquire: pairs with the Release of the replacement
    /// that stored it, so everything written into the value before it was
    /// published is visible.
    #[inline]
    pub(crate) fn load(&self) -> Current<'_, T> {
        let node = self.head.load(Ordering::Acquire);
        // SAFETY: loaded from `head`, Acquire.
        unsafe { self.current(node) }
    }

    /// Replaces `seen` by `new` if `seen` is still the value; the replaced
    /// value is kept until `self` is dropped. On success returns the new
    /// value; otherwise gives `new` back with the value that is current now.
    ///
    /// Success AcqRel (Release publishes `new` and its link; Acquire orders
    /// after the replaced value's publication), failure Acquire (the value
    /// returned will be read).
    pub(crate) fn replace<'a>(
        &'a self,
        seen: Current<'a, T>,
        new: T,
    ) -> Result<Current<'a, T>, (T, Current<'a, T>)> {
        let node = boxed(new, seen.node);
        match self
            .head
            .compare_exchange(seen.node, node, Ordering::AcqRel, Ordering::Acquire)
        {
            // SAFETY: the successful swap published `node`. It now owns `seen`,
            // which `head` no longer holds.
            Ok(_) => Ok(unsafe { self.current(node) }),
            Err(now) => {
                // SAFETY: `node` was never published, so it is this thread's
                // alone; its `replaced` link is only borrowed (`seen` stays
                // owned by whichever node or `head` holds it).
                let ours = unsafe { Box::from_raw(node) }.value.into_inner();
                // SAFETY: `now` is the value of `head` read by the failed
                // swap, Acquire.
                Err((ours, unsafe { self.current(now) }))
            }
        }
    }
}

impl<T> Drop for Published<T> {
    fn drop(&mut self) {
        let mut node = self.head.load(Ordering::Relaxed);
        while !node.is_null() {
            // SAFETY: `&mut self`: no thread can load `head` any more, and values
            // loaded earlier were borrowed from `&self`, so they are gone. Each
            // node was boxed once and is owned by exactly one of `head` or the
            // node that replaced it, so it is freed once.
            let boxed = unsafe { Box::from_raw(node) };
            node = boxed.replaced;
        }
    }
}

/// Reference counting for values shared by successive published chains.
#[cfg(lockfree_cuckoo_filter_loom)]
pub(crate) use loom::sync::Arc;
/// Reference counting for values shared by successive published chains.
#[cfg(not(lockfree_cuckoo_filter_loom))]
pub(crate) use std::sync::Arc;

#[cfg(all(test, not(lockfree_cuckoo_filter_loom)))]
mod tests {
    use super::*;

    /// Counts drops, to check every value is freed exactly once.
    struct Counted<'a>(&'a std::sync::atomic::AtomicUsize);
    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn replaced_values_live_until_drop_and_are_freed_once() {
        let dropped = std::sync::atomic::AtomicUsize::new(0);
        let p = Published::new(Counted(&dropped));
        let first = p.load();
        let second = p.replace(first, Counted(&dropped)).ok().unwrap();
        // A stale replacement fails, gives its value back, and leaves `head`.
        let (lost, now) = p.replace(first, Counted(&dropped)).err().unwrap();
        assert!(now.same(second) && !now.same(first));
        drop(lost);
        assert_eq!(dropped.load(std::sync::atomic::Ordering::Relaxed), 1);
        // `first` is still readable: replaced, not freed.
        assert!(std::ptr::eq(first.0, &dropped));
        assert!(p.load().same(second));
        // The replaced value is listed, once.
        assert_eq!(p.load().replaced().count(), 1);
        assert!(std::ptr::eq(p.load().replaced().next().unwrap(), &*first));
        assert_eq!(first.replaced().count(), 0);
        drop(p);
        assert_eq!(dropped.load(std::sync::atomic::Ordering::Relaxed), 3);
    }
}
