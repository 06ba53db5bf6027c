export { createSharedStore, SharedStore, type LockAttempt } from './store.js';
export { FilterLease, type AppendOutcome } from './filter-lease.js';
