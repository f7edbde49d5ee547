//! When a thread's cache of pieces grows: when it misses more pieces than it holds, twice as
//! many as it has slots in one run of lookups, and at least one lookup in [`MISS_RATE`]. The
//! pieces it meets again are then more than it can hold (a text of megabytes, a long session of
//! many files), and each is merged again after others pushed it out, a merge costing many
//! lookups. Its table is then swapped, once, for one of [`GROWN`] times the slots, which takes
//! each piece and count the small one held, before the thread's next text, never within one: a
//! text's first count pays for no grown table's pages (each a page fault as it is first
//! written), which the texts counted after it make good. A thread that misses less keeps the
//! small table, which stays in the CPU's caches: a long-lived one that counts a gateway's
//! requests grows only if they hold more pieces than its table.
//!
//! Grown, a thread's caches hold 8.5 MB to count, 16.25 MB once it encodes:
//! [`short_piece_cache`]'s 2 MB of words and 4 MB of tokens, and [`piece_cache`]'s 6.5 MB of
//! pieces and 3.75 MB of tokens. What that buys on texts of megabytes counted again is in
//! `benches/README.md`.
//!
//! [`short_piece_cache`]: super::short_piece_cache
//! [`piece_cache`]: super::piece_cache

/// How many times the slots a grown table has.
pub(super) const GROWN: usize = 8;

/// The lookups of a run: the counts start again after this many times a table's slots, so that
/// a thread's table grows for what it meets now, not for what it met over hours.
const RUN: usize = 64;

/// A table grows only if at least one lookup in this many missed.
const MISS_RATE: usize = 50;

/// The lookups and misses of a table's current run.
#[derive(Debug, Default)]
pub(super) struct Growth {
    lookups: usize,
    misses: usize,
}

impl Growth {
    /// Counts a piece looked up.
    #[inline(always)]
    pub(super) fn looked_up(&mut self) {
        self.lookups += 1;
    }

    /// Counts a piece looked up and not found.
    #[inline(always)]
    pub(super) fn missed(&mut self) {
        self.misses += 1;
    }

    /// Whether a table of `slots`, not grown yet, is to grow: it has missed twice its slots in
    /// this run, and one lookup in [`MISS_RATE`]. A run of [`RUN`] times its slots ends here.
    pub(super) fn due(&mut self, slots: usize) -> bool {
        let due = self.misses >= 2 * slots && self.misses * MISS_RATE >= self.lookups;
        if self.lookups >= RUN * slots {
            *self = Growth::default();
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lookups: usize, misses: usize) -> Growth {
        let mut growth = Growth::default();
        (0..lookups).for_each(|_| growth.looked_up());
        (0..misses).for_each(|_| growth.missed());
        growth
    }

    #[test]
    fn a_table_is_due_to_grow_after_twice_its_slots_missed_at_one_lookup_in_fifty() {
        assert!(
            !run(1000, 199).due(100),
            "fewer misses than twice the slots"
        );
        assert!(run(1000, 200).due(100));
        assert!(run(10_000, 200).due(100), "one in fifty");
        assert!(!run(10_001, 200).due(100), "fewer than one in fifty");
    }

    #[test]
    fn a_run_starts_again_after_sixty_four_times_the_slots_looked_up() {
        let mut growth = run(6399, 150);
        assert!(!growth.due(100));
        (0..50).for_each(|_| growth.missed());
        assert!(growth.due(100), "the same run");
        let mut growth = run(6400, 150);
        assert!(!growth.due(100));
        (0..50).for_each(|_| growth.missed());
        assert!(!growth.due(100), "a new run: 50 misses");
    }
}
