/**
 * A large operation waits for its turn (LARGE_OPERATION_CONCURRENCY) no longer than its deadline
 * (REQUEST_TIMEOUT_MS): a turn held by an answer its client does not read cannot keep the others
 * waiting past theirs. What has not resolved by then is UPSTREAM_UNAVAILABLE ("timed out").
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { listen, type Listening } from '../helpers/listen.js';

const DEADLINE_MS = 3000;

let gateway: TestGateway | undefined;
let server: Listening | undefined;
let unread: Socket | undefined;
afterEach(async () => {
  unread?.destroy();
  await server?.close();
  await gateway?.close();
  unread = server = gateway = undefined;
});

const FILE = 'name size status bytesTransferred keepInStorage sourceType upstreamSourceType uploadEndpoint { uri } sourceEndpoint { uri }';
const representations = Array.from({ length: 50 }, () => `{ __typename: "UpdateSession", id: "${SESSION_IDS.many}" }`).join(' ');
/**
 * 50 lookups of a 150-file session, its files three times: about 6 MB, more than the sockets' buffers
 * hold for a client that reads nothing (Linux lets a socket's send buffer grow to 4 MB by default).
 */
const HUGE_ANSWER = `{ _entities(representations: [${representations}]) {
  ... on UpdateSession { files { ${FILE} } again: files { ${FILE} } more: files { ${FILE} } } } }`;
const LARGE_PAGE = '{ auditEvents(first: 2000) { edges { cursor } } }';
const SMALL_PAGE = '{ auditEvents(first: 20) { edges { cursor } } }';

interface Answer {
  data?: any;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string } }[];
}

/**
 * Posts an operation. The client gives up after `patienceMs`: by default four deadlines, a margin for
 * a loaded machine yet far below the minute an unread answer holds its turn.
 */
async function post(query: string, patienceMs = 4 * DEADLINE_MS): Promise<Answer> {
  const response = await fetch(server!.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(patienceMs),
  });
  return (await response.json()) as Answer;
}

/** Sends an operation over a connection of its own and never reads the answer. */
async function postUnread(query: string): Promise<Socket> {
  const { port } = new URL(server!.url);
  const body = JSON.stringify({ query });
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  socket.pause();
  socket.write(
    `POST /graphql HTTP/1.1\r\nhost: gateway.test\r\naccept: application/json\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

describe('the wait for a large operation turn', { timeout: 60_000 }, () => {
  it('ends with the deadline: the fields answer timed out, small operations and later turns are not held up', async () => {
    gateway = await startTestGateway({ env: { REQUEST_TIMEOUT_MS: String(DEADLINE_MS), LARGE_OPERATION_CONCURRENCY: '1' } });
    server = await listen(gateway.yoga);
    // Credentials of both upstreams first, so that what follows waits for nothing else.
    expect((await post(`{ auditEvents(first: 1) { edges { cursor } } updateSessionFiles(updateSessionId: "${SESSION_IDS.ready}") { name } }`, 20_000)).errors).toBeUndefined();

    // The only turn: an answer whose client reads nothing holds it until the stall time (a minute).
    const filesBefore = gateway.sim.control.counters().files;
    unread = await postUnread(HUGE_ANSWER);
    await vi.waitFor(() => expect(gateway!.sim.control.counters().files).toBe(filesBefore + 1), { timeout: 10_000 });

    gateway.sim.control.setLatency(1000, 'audit');
    const [small, ...large] = await Promise.all([post(SMALL_PAGE), post(LARGE_PAGE), post(LARGE_PAGE), post(LARGE_PAGE)]);
    expect(small.errors).toBeUndefined();
    expect(small.data.auditEvents.edges).toHaveLength(20);
    for (const answer of large) {
      expect(answer).toEqual({
        data: { auditEvents: null },
        errors: [
          expect.objectContaining({
            path: ['auditEvents'],
            message: expect.stringMatching(/timed out/),
            extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE' }),
          }),
        ],
      });
    }

    // The operations that gave up their wait took no turn with them: once the unread answer is
    // dropped, the next large operation runs.
    unread.destroy();
    gateway.sim.control.setLatency(0, 'audit');
    const next = await post(LARGE_PAGE, 20_000);
    expect(next.errors).toBeUndefined();
    expect(next.data.auditEvents.edges).toHaveLength(2000);
  });
});
