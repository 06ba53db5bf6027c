/**
 * Hooks with nothing to do for a request do nothing for it: the persisted-query hook answers a
 * request without the extension synchronously (no promise in Yoga's parameter phase), the readiness
 * hook leaves every other path alone (reading only its path), and Yoga's own debug lines are not
 * put together when debug is off. What they do when they do act is pinned here too; the
 * persisted-query protocol itself is in test/clients/persisted-queries.test.ts.
 */
import type { Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.js';
import { useAutomaticPersistedQueries } from '../../src/gateway/plugins/auth/automatic-persisted-queries.js';
import { useProbe } from '../../src/gateway/plugins/compat/probes.js';
import { yogaLogger } from '../../src/gateway/plugins/observability/logging.js';
import { withRequestId } from '../../src/gateway/plugins/http/request-id.js';
import { MemoryLog } from '../helpers/memory-log.js';

type OnParams = NonNullable<Plugin['onParams']>;
type OnParamsPayload = Parameters<OnParams>[0];

function paramsPayload(params: Record<string, unknown>) {
  const payload = {
    params,
    request: new Request('http://gateway.test/graphql', { method: 'POST' }),
    setParams: (next: Record<string, unknown>) => (payload.params = next),
    setResult: () => {},
    fetchAPI: globalThis,
    context: {},
  };
  return payload;
}

describe('persisted-query hook', () => {
  const onParams = useAutomaticPersistedQueries().onParams!;

  it('returns nothing (no promise) for a request without the persistedQuery extension', () => {
    const payload = paramsPayload({ query: '{ __typename }', extensions: { other: true } });
    expect(onParams(payload as unknown as OnParamsPayload)).toBeUndefined();
    expect(payload.params).toEqual({ query: '{ __typename }', extensions: { other: true } });
  });

  it('still answers a hash it does not know with PERSISTED_QUERY_NOT_FOUND', async () => {
    const payload = paramsPayload({ extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } });
    await expect(Promise.resolve(onParams(payload as unknown as OnParamsPayload))).rejects.toMatchObject({
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
    });
  });
});

describe('readiness hook', () => {
  type OnRequestPayload = Parameters<NonNullable<Plugin['onRequest']>>[0];
  let ready = true;
  let checks = 0;
  const plugin = useProbe('/readyz', () => (checks++, ready));

  function ask(path: string) {
    let answered: Response | undefined;
    const url = new URL(path, 'http://gateway.test');
    const read = new Set<string>();
    const payload = {
      request: new Request(url),
      // Records what the hook reads of the URL: a URL pattern would read more than its path.
      url: new Proxy(url, {
        get: (target, key) => {
          read.add(String(key));
          return Reflect.get(target, key) as unknown;
        },
      }),
      fetchAPI: globalThis,
      endResponse: (response: Response) => (answered = response),
    };
    const returned = plugin.onRequest!(payload as unknown as OnRequestPayload);
    return { returned, answered: () => answered, read };
  }

  it('leaves other paths alone, without matching their URL against a pattern', () => {
    const { returned, answered, read } = ask('/graphql?query=%7B__typename%7D');
    expect(returned).toBeUndefined();
    expect([...read]).toEqual(['pathname']);
    expect(answered()).toBeUndefined();
    expect(checks).toBe(0);
  });

  it('answers /readyz with the check: 200 when ready, 503 when draining', () => {
    expect(ask('/readyz').answered()?.status).toBe(200);
    ready = false;
    expect(ask('/readyz').answered()?.status).toBe(503);
    expect(checks).toBe(2);
  });
});

describe("Yoga's own log lines", () => {
  /** An argument that records whether anything read it to build a line. */
  const watched = () => {
    const seen = { read: false };
    return { seen, value: { toJSON: () => ((seen.read = true), 'detail') } };
  };

  it('builds no debug line when debug is off', () => {
    const memory = new MemoryLog();
    const log = yogaLogger(createLogger({ level: 'info', destination: memory }), new WeakSet());
    const { seen, value } = watched();
    withRequestId('req-quiet', () => log.debug('Processing GraphQL Parameters', value));
    expect(seen.read).toBe(false);
    expect(memory.lines()).toEqual([]);
  });

  it('writes debug lines with the request id when debug is on', () => {
    const memory = new MemoryLog();
    const log = yogaLogger(createLogger({ level: 'debug', destination: memory }), new WeakSet());
    const { seen, value } = watched();
    withRequestId('req-debug', () => log.debug('Processing GraphQL Parameters', value));
    expect(seen.read).toBe(true);
    expect(memory.lines()).toMatchObject([
      { level: 20, component: 'yoga', requestId: 'req-debug', msg: 'Processing GraphQL Parameters "detail"' },
    ]);
  });
});
