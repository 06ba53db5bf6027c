import type { Plugin } from 'graphql-yoga';
import type { ByteReservations } from '../../../lib/byte-reservations.js';
import { useHeldRequests } from './held-requests.js';
import { useOperationLimits } from './operation-limits.js';
import type { createParseCache } from './parse-cache.js';
import { useStreamInitialCount } from './stream-initial-count.js';

export function limitsPlugins({ memoryBudget, largeOperationConcurrency, parseCache }: {
  readonly memoryBudget: ByteReservations;
  readonly largeOperationConcurrency: number;
  readonly parseCache: ReturnType<typeof createParseCache>;
}): Plugin[] {
  return [
    useHeldRequests(memoryBudget),
    // Before the operation limits: an operation it refuses never waits for a large-operation slot.
    useStreamInitialCount(),
    ...useOperationLimits({ largeOperationConcurrency }),
    parseCache.forgetInvalidDocuments,
  ];
}
