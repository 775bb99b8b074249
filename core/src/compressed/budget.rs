//! A memory budget in bytes, shared by the threads that decode compressed
//! bundles: each takes what its decoding buffers hold before it makes
//! them (and what the compressed input it reads holds while it reads it),
//! and gives it back when it lets them go, so that how much is held
//! at once is bounded by bytes, not by a count of bundles. A thread that
//! holds nothing may wait for room; one that holds something only asks
//! (and, told no, finishes what it holds first), so that no two threads
//! wait on each other.

use std::sync::{Condvar, Mutex, PoisonError};

/// What decoding may hold at once, in bytes.
#[derive(Debug)]
pub struct MemoryBudget {
    total: u64,
    state: Mutex<Held>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct Held {
    /// Bytes taken and not yet given back.
    used: u64,
    /// Threads waiting for room.
    waiting: u32,
    /// The most `used` has been.
    peak: u64,
}

impl MemoryBudget {
    /// The default: 256 MiB, or the largest single bundle's need when that
    /// is more (one bundle is always decoded, whatever its size).
    pub const DEFAULT: u64 = 256 << 20;

    /// A budget of `total` bytes.
    pub fn new(total: u64) -> Self {
        MemoryBudget {
            total,
            state: Mutex::new(Held::default()),
            freed: Condvar::new(),
        }
    }

    /// The bytes a bundle of `len` decoded bytes takes: its decoding
    /// buffer, an eighth larger so that the next bundle, a little larger,
    /// fits in it too.
    pub fn room_for(len: u64) -> u64 {
        len.saturating_add(len / 8)
    }

    /// The default budget of a job whose largest bundle decodes to
    /// `largest` bytes: [`MemoryBudget::DEFAULT`], or that bundle's room
    /// when it is more (one bundle is always decoded, whatever its size).
    pub fn default_for(largest: u64) -> u64 {
        Self::DEFAULT.max(Self::room_for(largest))
    }

    /// The bytes it allows at once.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Takes `bytes` if they fit now and nobody waits for room (a waiter
    /// goes first, so that one thread's small requests cannot starve
    /// another's large one).
    pub fn try_take(&self, bytes: u64) -> bool {
        let mut held = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let fits = held.used.saturating_add(bytes) <= self.total;
        if bytes == 0 || (fits && held.waiting == 0) {
            held.add(bytes);
            return true;
        }
        false
    }

    /// Takes `bytes`, waiting until they fit, or, for more than the whole
    /// budget, until nothing else is held. Only for a caller that holds
    /// nothing of it: then every holder is one that goes on without
    /// waiting, and gives back what it holds.
    pub fn take(&self, bytes: u64) {
        let mut held = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        held.waiting = held.waiting.saturating_add(1);
        while held.used != 0 && held.used.saturating_add(bytes) > self.total {
            held = self
                .freed
                .wait(held)
                .unwrap_or_else(PoisonError::into_inner);
        }
        held.waiting = held.waiting.saturating_sub(1);
        held.add(bytes);
    }

    /// Gives back `bytes` taken before.
    pub fn give(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let mut held = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        held.used = held.used.saturating_sub(bytes);
        drop(held);
        self.freed.notify_all();
    }

    /// The bytes taken now.
    pub fn used(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .used
    }

    /// The most bytes taken at once so far.
    pub fn peak(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .peak
    }
}

impl Held {
    fn add(&mut self, bytes: u64) {
        self.used = self.used.saturating_add(bytes);
        self.peak = self.peak.max(self.used);
    }
}

#[cfg(test)]
mod tests {
    use super::MemoryBudget;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn asks_fit_or_wait_and_a_waiter_goes_first() {
        let budget = MemoryBudget::new(100);
        assert!(budget.try_take(60));
        assert!(!budget.try_take(50));
        assert!(budget.try_take(40));
        budget.give(100);
        // More than the whole budget: taken once nothing else is held.
        budget.take(500);
        assert_eq!(budget.used(), 500);
        assert!(!budget.try_take(1));
        budget.give(500);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn threads_never_hold_more_than_the_budget() {
        let budget = MemoryBudget::new(100);
        let peak = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (budget, peak) = (&budget, &peak);
                s.spawn(move || {
                    for i in 0..200u64 {
                        let bytes = 10 + (t * 7 + i * 13) % 60;
                        budget.take(bytes);
                        peak.fetch_max(budget.used(), Ordering::SeqCst);
                        assert!(budget.peak() <= 100);
                        budget.give(bytes);
                    }
                });
            }
        });
        assert!(peak.load(Ordering::SeqCst) <= 100);
        assert_eq!(budget.used(), 0);
    }
}
