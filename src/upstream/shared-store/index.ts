export { createSharedStore, SharedStore, type BlockingReader, type LockAttempt, type StreamEntry } from './store.js';
export { FilterLease, type AppendOutcome } from './filter-lease.js';
