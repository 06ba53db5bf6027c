/** `Subscription.auditEventAdded` (README "Live audit records"): the LiveAudit, and where a request's context carries it. */
import type { ServerResponse } from 'node:http';
import type { Config } from '../../lib/config.js';
import type { Logger } from '../../lib/logger.js';
import type { SharedStore } from '../../upstream/shared-store/store.js';
import type { Upstreams } from '../../upstream/types.js';
import { LiveAudit, type LiveAuditEvents, type LiveAuditOptions, type LiveAuditStats, type LiveSubscribeArgs } from './hub.js';
import type { LiveItem } from './subscriber.js';

export { LiveAudit, type LiveAuditEvents, type LiveAuditStats, type LiveItem };

export const LIVE_AUDIT_FIELD = 'liveAudit';
/** Where src/server/websocket/index.ts puts the connection's send queue on each operation's context. */
export const LIVE_SOCKET = 'liveSocket';

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

/** Ends an operation's connection if it holds unsent data: neither transport notices, both wait for the client. */
function connectionEnderOf(context: object): (() => void) | undefined {
  const socket = (context as { [LIVE_SOCKET]?: { endIfUndrained(): void } })[LIVE_SOCKET];
  if (socket) return () => socket.endIfUndrained();
  const res = (context as { res?: ServerResponse }).res;
  if (typeof res?.destroy !== 'function') return undefined;
  return () => {
    if (!res.writableFinished) res.destroy();
  };
}

export function subscribeLive(context: object, args: LiveSubscribeArgs): AsyncIterableIterator<LiveItem> {
  const live = (context as { [LIVE_AUDIT_FIELD]?: LiveAudit })[LIVE_AUDIT_FIELD];
  if (!live) throw new Error('live audit subscriptions are not set up on this server');
  return live.subscribe(args, connectionEnderOf(context));
}
