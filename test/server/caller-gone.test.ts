/**
 * A client that goes away while its upstream calls are in flight (it closes the connection, or
 * abandons a @stream answer before it comes) is no upstream failure: no `warn` or `error` line, at
 * most one `info` line for the request (its access line, status 499 as a proxy logs it), the calls
 * counted with outcome `cancelled`, and no `UPSTREAM_*` code anywhere.
 */
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { listen, type Listening } from '../helpers/listen.js';

let gateway: TestGateway | undefined;
let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  await gateway?.close();
  gateway = server = undefined;
});

/** Resolves each time the gateway sends an upstream request whose path matches. */
function sendingWatch(pattern: RegExp) {
  let sent = 0;
  const interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
    if (pattern.test(options.path)) sent++;
    return dispatch(options, handler);
  };
  return { interceptor, sent: () => sent };
}

const cases = [
  {
    name: 'a query whose client closes the connection',
    route: 'files' as const,
    path: /updatesession\/file/,
    accept: 'application/json',
    query: (id: string) => `{ updateSessionFiles(updateSessionId: "${id}") { name } }`,
  },
  {
    name: 'a @stream answer its client abandons',
    route: 'audit' as const,
    path: /analytics\/reports\/audit/,
    accept: 'multipart/mixed',
    query: () => '{ auditEvents(first: 300) { edges @stream(initialCount: 1) { cursor } } }',
  },
];

describe('a client that goes away mid-call', { timeout: 20_000 }, () => {
  it.each(cases)('$name', async ({ route, path, accept, query }) => {
    const watch = sendingWatch(path);
    gateway = await startTestGateway({ upstream: { interceptors: [watch.interceptor] } });
    server = await listen(gateway.yoga);
    const [session] = gateway.sim.control.sessions();
    // Credentials first: the abandoned request makes only the call it is left in.
    const warm = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ auditEvents(first: 1) { edges { cursor } } updateSessionFiles(updateSessionId: "${session!.id}") { name } }` }),
    });
    expect(((await warm.json()) as { errors?: unknown }).errors).toBeUndefined();
    const before = gateway.logs().length;
    const sentBefore = watch.sent();

    gateway.sim.control.setLatency(3000, route);
    const client = new AbortController();
    const answer = fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query: query(session!.id) }),
      signal: client.signal,
    }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(watch.sent()).toBeGreaterThan(sentBefore), { timeout: 5000 });
    client.abort();
    expect(await answer).toMatchObject({ name: 'AbortError' });

    const lines = () => gateway!.logs().slice(before);
    await vi.waitFor(() => expect(lines().some((line) => line['msg'] === 'request')).toBe(true), { timeout: 5000 });
    await vi.waitFor(() => expect(lines().some((line) => line['msg'] === 'upstream call cancelled: the caller went away')).toBe(true), {
      timeout: 5000,
    });
    const written = lines();
    expect(written.filter((line) => (line['level'] as number) >= 40)).toEqual([]);
    expect(written.filter((line) => line['level'] === 30)).toEqual([expect.objectContaining({ msg: 'request', status: 499 })]);
    expect(JSON.stringify(written)).not.toContain('UPSTREAM_');

    const scrape = await gateway.metrics.registry.metrics();
    expect(scrape).toMatch(/gateway_upstream_request_duration_seconds_count\{[^}]*status="none",outcome="cancelled"\} [1-9]/);
    expect(scrape).not.toMatch(/outcome="UPSTREAM_/);
  });
});
