/**
 * Ends the connection of a live subscription whose client stopped reading, if the connection
 * still holds data it could not hand to the network: neither transport notices that on its own,
 * as both wait for the client. SSE: the Node response of the request (Yoga puts the server
 * context, `res` included, on the GraphQL context). WebSocket: the socket's send queue
 * (src/server/websocket/transport.ts), which src/server/websocket/index.ts puts on each operation's context under
 * LIVE_SOCKET; every subscription of that connection shares it.
 */
import type { ServerResponse } from 'node:http';

export const LIVE_SOCKET = 'liveSocket';

export type EndIfUndrained = () => void;

export function connectionEnderOf(context: object): EndIfUndrained | undefined {
  const socket = (context as { [LIVE_SOCKET]?: { endIfUndrained: EndIfUndrained } })[LIVE_SOCKET];
  if (socket) return () => socket.endIfUndrained();
  const res = (context as { res?: ServerResponse }).res;
  if (res && typeof res.destroy === 'function') {
    return () => {
      if (!res.writableFinished) res.destroy();
    };
  }
  return undefined;
}
