//! Growing: publishing a chain one table longer, by a compare-and-swap that
//! one thread wins, the others taking the winner's table.

use super::chain::Chain;
use super::GrowableCuckooFilter;
use crate::error::InsertError;
use crate::fingerprint::FingerprintBits;
use crate::sync::published::Current;

impl<S> GrowableCuckooFilter<S> {
    /// Publishes a chain one table longer than `seen`, or finds that another
    /// thread did; returns the chain that is current afterwards.
    #[cold]
    pub(super) fn grow_from<'a>(
        &'a self,
        seen: Current<'a, Chain>,
    ) -> Result<Current<'a, Chain>, InsertError> {
        let now = self.chain();
        if !now.same(seen) {
            return Ok(now);
        }
        let next = seen.grown(self.rate)?;
        match self.chain.replace(seen, next) {
            Ok(ours) => {
                self.cover();
                Ok(ours)
            }
            // Another thread's table won; ours is dropped here.
            Err((_ours, theirs)) => Ok(theirs),
        }
    }

    /// The layouts (width, bucket count) the chain will have once grown to
    /// `tables` tables (for `merge`, to check them before it grows or merges
    /// anything), or why it cannot grow that far.
    pub(crate) fn layouts_when_grown(
        &self,
        tables: usize,
    ) -> Result<Vec<(FingerprintBits, u64)>, InsertError> {
        self.chain().layouts(self.rate, tables)
    }

    /// Grows the chain until it has at least `tables` tables (for `merge`).
    pub(crate) fn grow_to(&self, tables: usize) -> Result<(), InsertError> {
        let mut chain = self.chain();
        while chain.tables().len() < tables {
            chain = self.grow_from(chain)?;
        }
        Ok(())
    }

    /// [`Self::grow_from`] without the covering (for the test hooks).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn grow_without_covering(&self) {
        let seen = self.chain();
        if let Ok(next) = seen.grown(self.rate) {
            let _ = self.chain.replace(seen, next);
        }
    }
}
