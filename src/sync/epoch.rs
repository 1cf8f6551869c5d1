//! One pointer to an immutable value that is replaced, never mutated, and that
//! readers use without locks: the growable filter's chain of tables.
//!
//! Outside loom this is `crossbeam-epoch`: the value is an [`Atomic`] loaded
//! under a pinned [`Guard`], replaced by compare-and-swap, and the value it
//! replaced is handed to the epoch collector (`defer_destroy`), which frees it
//! once every thread that might still be reading it has unpinned.
//!
//! Under loom the filter is built with `RUSTFLAGS="--cfg
//! lockfree_cuckoo_filter_loom"` only, and `crossbeam-epoch` switches to loom's
//! atomics only under its own `--cfg crossbeam_loom` plus its `loom` feature,
//! so its pointer would be invisible to the model. Instead this module
//! provides the same three operations on a loom
//! [`AtomicPtr`](loom::sync::atomic::AtomicPtr), with the same orderings, and
//! the value kept in a loom `UnsafeCell`: loom then
//! checks both the publication race (a reader that can see the pointer must
//! also see the value written before it was published, or loom reports a
//! causality violation) and every interleaving of loads and swaps. Replaced
//! values are not reclaimed during a model; they are freed when the pointer
//! is dropped. Reclamation itself is `crossbeam-epoch`'s, which is
//! model-checked by its own authors.

pub(crate) use imp::{pin, Current, Guard, Published};

#[cfg(not(lockfree_cuckoo_filter_loom))]
mod imp {
    use std::ops::Deref;

    pub(crate) use crossbeam_epoch::Guard;
    use crossbeam_epoch::{self as epoch, Atomic, Owned, Shared};

    use crate::sync::Ordering;

    /// Pins the current thread: values loaded under the guard stay alive until
    /// it is dropped.
    #[inline]
    pub(crate) fn pin() -> Guard {
        epoch::pin()
    }

    /// The value a [`Published`] pointed to when loaded; alive while the guard
    /// it was loaded under lives.
    pub(crate) struct Current<'g, T> {
        shared: Shared<'g, T>,
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
            self.shared == other.shared
        }
    }

    impl<'g, T> Deref for Current<'g, T> {
        type Target = T;
        #[inline]
        fn deref(&self) -> &T {
            // SAFETY: a `Published` never holds null (`new` and `replace` store
            // boxes), and the value it held is destroyed only through
            // `defer_destroy` after it was replaced, so it lives at least as long
            // as the guard `'g` under which it was loaded.
            unsafe { self.shared.deref() }
        }
    }

    /// An atomic pointer to a `T` that is replaced by compare-and-swap.
    pub(crate) struct Published<T> {
        ptr: Atomic<T>,
    }

    impl<T> Published<T> {
        pub(crate) fn new(value: T) -> Self {
            Self {
                ptr: Atomic::new(value),
            }
        }

        /// The current value. Acquire: pairs with the Release of the `replace`
        /// that stored it, so everything written into the value before it was
        /// published is visible.
        #[inline]
        pub(crate) fn load<'g>(&self, guard: &'g Guard) -> Current<'g, T> {
            Current {
                shared: self.ptr.load(Ordering::Acquire, guard),
            }
        }

        /// Replaces `current` by `new` if `current` is still the value; the
        /// replaced value is reclaimed once no pinned thread can read it. On
        /// success returns the new value; otherwise gives `new` back with the
        /// value that is current now.
        ///
        /// Success AcqRel (Release publishes `new`; Acquire orders after the
        /// replaced value's publication), failure Acquire (the value returned
        /// will be read).
        pub(crate) fn replace<'g>(
            &self,
            current: Current<'g, T>,
            new: T,
            guard: &'g Guard,
        ) -> Result<Current<'g, T>, (T, Current<'g, T>)> {
            match self.ptr.compare_exchange(
                current.shared,
                Owned::new(new),
                Ordering::AcqRel,
                Ordering::Acquire,
                guard,
            ) {
                Ok(shared) => {
                    // SAFETY: `current` is no longer reachable through `ptr`, and
                    // only the thread whose swap removed it (this one) defers it.
                    unsafe { guard.defer_destroy(current.shared) };
                    // Replacements are rare and their garbage may hold much
                    // memory: hand it to the global queue now rather than when
                    // this thread's local bag fills up.
                    guard.flush();
                    Ok(Current { shared })
                }
                Err(e) => Err((*e.new.into_box(), Current { shared: e.current })),
            }
        }
    }

    impl<T> Drop for Published<T> {
        fn drop(&mut self) {
            // SAFETY: `&mut self`: no thread can load the pointer any more, and
            // values loaded earlier were borrowed from `&self`, so they are gone.
            unsafe {
                let guard = epoch::unprotected();
                drop(self.ptr.load(Ordering::Relaxed, guard).into_owned());
            }
            // Let the collector free the values replaced earlier now if no
            // other thread is pinned: a few flushes advance the epoch past them.
            let guard = epoch::pin();
            for _ in 0..3 {
                guard.flush();
            }
        }
    }
}

#[cfg(lockfree_cuckoo_filter_loom)]
mod imp {
    use std::ops::Deref;
    use std::sync::Mutex;

    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicPtr, Ordering};

    /// Pinning is a no-op: nothing is reclaimed while a model runs.
    pub(crate) struct Guard(());

    pub(crate) fn pin() -> Guard {
        Guard(())
    }

    struct Node<T> {
        value: UnsafeCell<T>,
    }

    pub(crate) struct Current<'g, T> {
        node: *mut Node<T>,
        value: &'g T,
    }

    impl<T> Clone for Current<'_, T> {
        fn clone(&self) -> Self {
            *self
        }
    }
    impl<T> Copy for Current<'_, T> {}

    impl<T> Current<'_, T> {
        pub(crate) fn same(self, other: Self) -> bool {
            self.node == other.node
        }
    }

    impl<T> Deref for Current<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.value
        }
    }

    pub(crate) struct Published<T> {
        ptr: AtomicPtr<Node<T>>,
        /// Replaced nodes, freed on drop. A std mutex in loom-only code: it is
        /// never held across a loom operation, so it cannot block a model thread.
        retired: Mutex<Vec<*mut Node<T>>>,
    }

    // SAFETY: the nodes are owned by the pointer and only shared as `&T`.
    unsafe impl<T: Send + Sync> Send for Published<T> {}
    // SAFETY: as above.
    unsafe impl<T: Send + Sync> Sync for Published<T> {}

    fn boxed<T>(value: T) -> *mut Node<T> {
        Box::into_raw(Box::new(Node {
            value: UnsafeCell::new(value),
        }))
    }

    /// Reads the value of a node. loom checks that the node's creation (the
    /// write of the value) happens-before this read.
    ///
    /// # Safety
    ///
    /// `node` is live for `'g`.
    unsafe fn read<'g, T>(node: *mut Node<T>) -> &'g T {
        // SAFETY: the caller's promise; the value is never written after
        // creation, so shared references to it are sound.
        unsafe { (*node).value.with(|p| &*p) }
    }

    impl<T> Published<T> {
        pub(crate) fn new(value: T) -> Self {
            Self {
                ptr: AtomicPtr::new(boxed(value)),
                retired: Mutex::new(Vec::new()),
            }
        }

        pub(crate) fn load<'g>(&self, _guard: &'g Guard) -> Current<'g, T> {
            let node = self.ptr.load(Ordering::Acquire);
            Current {
                node,
                // SAFETY: nodes are freed only on drop.
                value: unsafe { read(node) },
            }
        }

        pub(crate) fn replace<'g>(
            &self,
            current: Current<'g, T>,
            new: T,
            _guard: &'g Guard,
        ) -> Result<Current<'g, T>, (T, Current<'g, T>)> {
            let node = boxed(new);
            match self
                .ptr
                .compare_exchange(current.node, node, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(old) => {
                    self.retired.lock().unwrap().push(old);
                    Ok(Current {
                        node,
                        // SAFETY: nodes are freed only on drop.
                        value: unsafe { read(node) },
                    })
                }
                Err(now) => {
                    // SAFETY: `node` was never published; it is ours alone.
                    let ours = unsafe { Box::from_raw(node) }.value.into_inner();
                    Err((
                        ours,
                        Current {
                            node: now,
                            // SAFETY: nodes are freed only on drop.
                            value: unsafe { read(now) },
                        },
                    ))
                }
            }
        }
    }

    impl<T> Drop for Published<T> {
        fn drop(&mut self) {
            let current = self.ptr.load(Ordering::Relaxed);
            for node in self.retired.get_mut().unwrap().drain(..).chain([current]) {
                // SAFETY: `&mut self`: every node is unreachable now, and each
                // was boxed once and is freed once.
                drop(unsafe { Box::from_raw(node) });
            }
        }
    }
}

/// Reference counting for values shared by successive published chains.
#[cfg(lockfree_cuckoo_filter_loom)]
pub(crate) use loom::sync::Arc;
/// Reference counting for values shared by successive published chains.
#[cfg(not(lockfree_cuckoo_filter_loom))]
pub(crate) use std::sync::Arc;
