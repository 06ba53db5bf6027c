/**
 * An operation over a WebSocket runs as a request to Yoga, but writes its access line when it ends
 * rather than a `request` line: the connection's request id and caller, the operation's id, name
 * and type, its duration, how it ended and the codes of the errors it was sent.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { auditCalls, LIVE_QUERY, registered, startLiveServer, type LiveServer } from './live-server.js';
import { RawConnections, sendSubscribe as subscribe, settledOperation as settled } from './raw-clients.js';

let server: LiveServer | undefined;
const connections = new RawConnections();
afterEach(async () => {
  connections.destroyAll();
  await server?.close();
  server = undefined;
});

const connect = (live: LiveServer) => connections.open(live);

const operationLines = (live: LiveServer) => live.logs().filter((l) => l.msg === 'websocket operation');

/** The one access line of operation `id`, once written. */
async function lineOf(live: LiveServer, id: string): Promise<Record<string, unknown>> {
  await vi.waitFor(() => expect(operationLines(live).filter((l) => l.operationId === id)).toHaveLength(1), { timeout: 5000 });
  return operationLines(live).find((l) => l.operationId === id)!;
}

describe('the access line of an operation over a WebSocket', () => {
  it("names the operation and carries the handshake's request id and caller", async () => {
    server = await startLiveServer();
    const socket = await connect(server);
    subscribe(socket, 'page-1', 'query RecentAudit { auditEvents(first: 2) { totalCount } }');
    await settled(socket, 'page-1');

    const handshake = server.logs().filter((l) => l.msg === 'request' && l.websocket === 'handshake');
    expect(handshake).toHaveLength(1);
    const line = await lineOf(server, 'page-1');
    expect(line).toMatchObject({
      level: 30,
      requestId: handshake[0]!.requestId,
      operationName: 'RecentAudit',
      operationType: 'query',
      caller: 'api-key:0',
      end: 'complete',
    });
    expect(line.durationMs).toEqual(expect.any(Number));
    expect(line).not.toHaveProperty('errors');
    // Only the handshake is an HTTP request: the operation writes no `request` line of its own.
    expect(server.logs().filter((l) => l.msg === 'request')).toHaveLength(1);
  });

  it("keeps the first 64 characters of the client's operation id", async () => {
    server = await startLiveServer();
    const socket = await connect(server);
    const id = `${'i'.repeat(64)}${'x'.repeat(936)}`;
    subscribe(socket, id, '{ __typename }');
    await settled(socket, id);

    expect(await lineOf(server, 'i'.repeat(64))).toMatchObject({ end: 'complete', operationType: 'query' });
  });

  it('lists the codes of the errors in its result', async () => {
    server = await startLiveServer();
    const socket = await connect(server);
    subscribe(socket, 'missing', '{ a: updateSession(id: "no-such-session") { id } b: updateSession(id: "other") { id } }');
    await settled(socket, 'missing');

    expect(await lineOf(server, 'missing')).toMatchObject({ operationType: 'query', end: 'complete', errors: ['NOT_FOUND'] });
  });

  it('says a refused operation ended in an error, with its code', async () => {
    // The upstream holds 'slow' in flight until the one after it is refused.
    server = await startLiveServer({ executionLimits: { perConnection: 1, total: 100 }, holdIdentity: auditCalls });
    const socket = await connect(server);
    subscribe(socket, 'invalid', '{ noSuchField }');
    await settled(socket, 'invalid');
    subscribe(socket, 'slow', '{ auditEvents(first: 1) { totalCount } }');
    subscribe(socket, 'one-too-many', '{ auditEvents(first: 1) { totalCount } }');
    await settled(socket, 'one-too-many');
    server.upstream!.release();
    await settled(socket, 'slow');

    expect(await lineOf(server, 'invalid')).toMatchObject({ end: 'error', errors: ['GRAPHQL_VALIDATION_FAILED'] });
    expect(await lineOf(server, 'one-too-many')).toMatchObject({ end: 'error', errors: ['RATE_LIMITED'] });
    expect(await lineOf(server, 'slow')).toMatchObject({ end: 'complete' });
    expect(operationLines(server)).toHaveLength(3);
  });

  it('is written when a live subscription ends: completed by the client, or with its socket', async () => {
    server = await startLiveServer();
    const socket = await connect(server);
    const live = server;
    await registered(live, () => subscribe(socket, 'completed', LIVE_QUERY, 'Live'));
    await registered(live, () => subscribe(socket, 'cut-off', LIVE_QUERY, 'Live'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(operationLines(live)).toHaveLength(0);

    socket.sendMessage({ id: 'completed', type: 'complete' });
    const completed = await lineOf(live, 'completed');
    expect(completed).toMatchObject({ operationName: 'Live', operationType: 'subscription', end: 'complete' });
    expect(completed.durationMs).toBeGreaterThanOrEqual(200);

    socket.socket.destroy();
    expect(await lineOf(live, 'cut-off')).toMatchObject({ operationType: 'subscription', end: 'socket closed' });
    expect(operationLines(live)).toHaveLength(2);
  });

  it('lists the code of the error that ended a live subscription', async () => {
    server = await startLiveServer({ env: { AUDIT_LIVE_GIVE_UP_MS: '300' } });
    const live = server;
    const socket = await connect(live);
    await registered(live, () => subscribe(socket, 'given-up', LIVE_QUERY, 'Live'));
    live.sim.control.failNext(1000, 503, { route: 'audit' });
    await settled(socket, 'given-up');

    expect(await lineOf(live, 'given-up')).toMatchObject({ operationType: 'subscription', end: 'complete', errors: ['UPSTREAM_UNAVAILABLE'] });
  });
});
