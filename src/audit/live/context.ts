/** Where a request's context carries the LiveAudit and, on WebSocket operations, the connection's send queue. */
import type { ServerResponse } from 'node:http';
import type { LiveAudit, LiveSubscribeArgs } from './hub.js';
import type { LiveItem } from './subscriber.js';

export const LIVE_AUDIT_FIELD = 'liveAudit';
/** Where src/server/websocket/index.ts puts the connection's send queue on each operation's context. */
export const LIVE_SOCKET = 'liveSocket';

export function liveAuditOf(context: object): LiveAudit {
  const live = (context as { [LIVE_AUDIT_FIELD]?: LiveAudit })[LIVE_AUDIT_FIELD];
  if (!live) throw new Error('live audit subscriptions are not set up on this server');
  return live;
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
  return liveAuditOf(context).subscribe(args, connectionEnderOf(context));
}
