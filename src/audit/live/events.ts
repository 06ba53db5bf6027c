/**
 * Hooks a metrics layer can subscribe to without the live code knowing about it, as upstream calls
 * have theirs (src/upstream/events.ts). A hook that throws is ignored.
 */
import type { ErrorCode } from '../../lib/errors.js';

/**
 * Why a subscription ended: its client ended it or went away (`client`), the gateway shut down
 * (`shutdown`), or the code of the error that ended it (`RATE_LIMITED`: the client did not keep up;
 * an upstream code: the upstream failed for longer than the give-up time).
 */
export type LiveEndReason = 'client' | 'shutdown' | ErrorCode;

export interface LiveAuditEvents {
  /** A record was handed to a subscription's client. */
  onRecordDelivered?(): void;
  /** A subscription takes no more records; its slot is free. */
  onSubscriptionEnd?(reason: LiveEndReason): void;
}
