/** Live audit records: `Subscription.auditEventAdded` (see README "Live audit records"). */
import type { Config } from '../../lib/config.js';
import type { Logger } from '../../lib/logger.js';
import type { SharedStore } from '../../upstream/shared-store/store.js';
import type { Upstreams } from '../../upstream/types.js';
import { LiveAudit, type LiveAuditOptions } from './hub.js';

export { LiveAudit, type LiveAuditEvents, type LiveAuditOptions, type LiveAuditStats, type LiveEndReason, type LiveSubscribeArgs } from './hub.js';
export { LIVE_AUDIT_FIELD, LIVE_SOCKET, liveAuditOf, subscribeLive } from './context.js';
export type { LiveItem } from './subscriber.js';

/** The gateway's LiveAudit, from its configuration; `events` for metrics, the rest for tests and the bench. */
export function createLiveAudit(
  config: Config,
  upstreams: Upstreams,
  log: Logger,
  tuning: Pick<LiveAuditOptions, 'pageSize' | 'maxBuffered' | 'stallMs' | 'endGraceMs' | 'maxReadBytes' | 'events'> = {},
  sharedStore?: SharedStore | undefined,
): LiveAudit {
  return new LiveAudit({
    identity: upstreams.identity,
    log,
    settleMs: config.auditCacheSettleMs,
    catchUpTimeoutMs: config.requestTimeoutMs,
    ...config.auditLive,
    ...tuning,
    ...(sharedStore && config.redis ? { shared: { store: sharedStore, leaseMs: config.redis.liveLeaseMs } } : {}),
  });
}
