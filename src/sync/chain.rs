//! Blocks chained on demand: a link that is null until some thread chains a
//! block after it, and then never changes until its owner is dropped. The
//! snapshot fronts' registry and the stash's lines grow this way.
//!
//! A thread that finds the link null allocates a block and publishes it by
//! compare-and-swap (Release, so that the block's contents are initialised
//! for whoever loads the link with Acquire; Acquire, so that a chaining
//! after a reader's [`Link::get_in_order`] sees what that reader did
//! before); a thread that loses the race frees its own block and takes the
//! winner's. Nothing is freed while the owner lives, so a reference to a
//! chained block lasts as long as the owner's.

use super::{AtomicPtr, Ordering};

/// A block that may have another chained after it.
pub(crate) trait Chained: Sized {
    /// The link to the block after this one.
    fn link(&self) -> &Link<Self>;
}

/// The link after a block: null, or a block leaked with `Box::into_raw` and
/// freed only by [`Link::free_chain`].
pub(crate) struct Link<T> {
    next: AtomicPtr<T>,
}

impl<T: Chained> Link<T> {
    pub(crate) fn new() -> Self {
        Self {
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The block chained after this link, if any (Acquire: its contents
    /// were initialised before it was published).
    #[inline]
    pub(crate) fn get(&self) -> Option<&T> {
        // SAFETY: a non-null link points to a block leaked by `get_or_chain`
        // with `Box::into_raw`, freed only by `free_chain`, which the owner
        // of the whole chain calls with `&mut`.
        unsafe { self.next.load(Ordering::Acquire).as_ref() }
    }

    /// The block chained after this link, if any, read in the link's
    /// modification order: a compare-and-swap of null for null (AcqRel)
    /// where [`Self::get`] loads. A chaining that comes after this reading
    /// reads it with its own compare-and-swap, so it synchronizes with it,
    /// and the chaining thread sees what this one did before reading; one
    /// that came before is seen. For a reader that must either reach every
    /// block chained while it reads or be seen by whoever chains it (a
    /// growable filter's covering, see `Table::read_fingerprints`).
    pub(crate) fn get_in_order(&self) -> Option<&T> {
        let null = std::ptr::null_mut();
        match self
            .next
            .compare_exchange(null, null, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => None,
            // SAFETY: as in `get`.
            Err(next) => Some(unsafe { &*next }),
        }
    }

    /// The block chained after this link, chaining `make()` if there is none.
    pub(crate) fn get_or_chain(&self, make: impl FnOnce() -> T) -> &T {
        if let Some(next) = self.get() {
            return next;
        }
        let fresh = Box::into_raw(Box::new(make()));
        match self.next.compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: just published, and freed only by `free_chain`.
            Ok(_) => unsafe { &*fresh },
            Err(winner) => {
                // SAFETY: `fresh` was never published: ours to free.
                drop(unsafe { Box::from_raw(fresh) });
                // SAFETY: as in `get`.
                unsafe { &*winner }
            }
        }
    }

    /// The blocks chained after this link, in order.
    pub(crate) fn chain(&self) -> impl Iterator<Item = &T> {
        std::iter::successors(self.get(), |block| block.link().get())
    }

    /// Frees every block chained after this link, one after another (not
    /// recursively: a chain may be long). For the owner's `Drop`: with
    /// `&mut` on it, no other thread holds the chain.
    pub(crate) fn free_chain(&mut self) {
        // A swap, not `get_mut`: loom's atomics have no `get_mut`.
        let mut next = self.next.swap(std::ptr::null_mut(), Ordering::Acquire);
        while !next.is_null() {
            // SAFETY: every chained block was leaked by `get_or_chain` with
            // `Box::into_raw` and is freed here once: each link is emptied
            // as it is followed.
            let block = unsafe { Box::from_raw(next) };
            next = block
                .link()
                .next
                .swap(std::ptr::null_mut(), Ordering::Acquire);
        }
    }
}

/// `first` and the blocks chained after it, in order.
pub(crate) fn from<T: Chained>(first: &T) -> impl Iterator<Item = &T> {
    std::iter::successors(Some(first), |block| block.link().get())
}
