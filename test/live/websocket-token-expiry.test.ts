/**
 * A WebSocket admitted by a JWT lasts as long as the token: at its `exp` the socket is closed with
 * 4403 and its subscriptions end, so an expired token runs nothing more. Clients reconnect with a
 * fresh token, as graphql-ws clients do with connection params made per connection.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TestIssuer } from '../helpers/jwt-issuer.js';
import { RawWebSocket } from '../helpers/websocket-frame.js';
import { LIVE_QUERY, sleep, startLiveServer, type LiveServer } from './live-server.js';

const issuer = new TestIssuer();
let server: LiveServer;
const sockets: RawWebSocket[] = [];
beforeAll(async () => {
  await issuer.start();
  server = await startLiveServer({ env: { GATEWAY_JWT_JWKS_URL: issuer.url } });
});
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.socket.destroy();
});
afterAll(async () => {
  await server.close();
  await issuer.close();
});

async function connectWith(token: string): Promise<RawWebSocket> {
  const socket = await RawWebSocket.open(Number(new URL(server.url).port), { authorization: `Bearer ${token}` });
  sockets.push(socket);
  return socket;
}
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

describe('a WebSocket admitted by a JWT', () => {
  it('is closed with 4403 when the token expires, its live subscription ended with it', async () => {
    // Time enough to connect and subscribe on a busy machine before it expires.
    const socket = await connectWith(issuer.token({ sub: 'alice', exp: inSeconds(4) }));
    const before = server.liveAudit.stats().subscriptions;
    socket.sendMessage({ id: 'live', type: 'subscribe', payload: { query: LIVE_QUERY } });
    await socket.until(() => server.liveAudit.stats().subscriptions === before + 1);

    await socket.until(() => socket.closeFrame !== undefined, 8000);
    expect(socket.closeFrame).toEqual({ code: 4403, reason: 'The token has expired; connect again with a new one.' });
    await socket.until(() => server.liveAudit.stats().subscriptions === before);
  });

  it('stays open when its token expires years from now, past what one timer can wait', async () => {
    // A timer asked to wait longer than Node can fires after 1 ms, with a warning, again and again.
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const socket = await connectWith(issuer.token({ sub: 'bob', exp: inSeconds(10 * 365 * 24 * 3600) }));
    await sleep(500);
    process.off('warning', onWarning);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
    socket.sendMessage({ id: 'q', type: 'subscribe', payload: { query: '{ __typename }' } });
    await socket.until(() => socket.messages.some((m) => (m as { id?: string; type: string }).id === 'q' && (m as { type: string }).type === 'complete'));
    expect(socket.closeFrame).toBeUndefined();
    expect(socket.messages).toContainEqual({ id: 'q', type: 'next', payload: { data: { __typename: 'Query' } } });
  });
});
