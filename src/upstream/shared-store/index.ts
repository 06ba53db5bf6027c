export { createSharedStore, SharedStore, type LockAttempt } from './store.js';
