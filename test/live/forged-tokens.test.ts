/**
 * Hand-made resumeAfter tokens, well-formed but carrying what no issued token carries: refused as
 * malformed (BAD_USER_INPUT) over SSE and WebSocket, before anything reaches the upstream. A token
 * can do no more than the arguments could when it was issued.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filterKey } from '../../src/audit/live/records.js';
import { encodeResumeToken, TOKEN_VALIDITY_MS, type ResumePoint } from '../../src/audit/live/resume-token.js';
import { registered, sleep, startLiveServer, subscribeSse, subscribeWs, type LivePayload, type LiveServer } from './live-server.js';

let server: LiveServer;
beforeAll(async () => {
  server = await startLiveServer();
});
afterAll(() => server?.close());

const MALFORMED = 'resumeAfter is not a token this gateway issued.';
const MINUTE = 60_000;

/** A token as the gateway would encode it, with the given fields. */
function forged(fields: Partial<ResumePoint> = {}): string {
  const now = Date.now();
  return encodeResumeToken({ filterKey: filterKey({}), newest: now, floor: now - MINUTE, issuedAt: now, delivered: [], ...fields });
}

const tokenOf = (payload: LivePayload | undefined) => payload!.data!.auditEventAdded.resumeAfter;

const cases: [string, () => string][] = [
  ['a floor 72 hours back', () => forged({ floor: Date.now() - 72 * 60 * MINUTE })],
  ['a floor of 0', () => forged({ floor: 0, newest: 0 })],
  [
    'a floor further back than `since` reached at its issue, with the settle time',
    () => forged({ floor: Date.now() - TOKEN_VALIDITY_MS - 1000 - server.config.auditCacheSettleMs - 1000 }),
  ],
  ['an issue time in the future', () => forged({ issuedAt: Date.now() + 60 * MINUTE })],
  ['a newest record after its issue', () => forged({ newest: Date.now() + 60 * MINUTE, floor: Date.now() + 60 * MINUTE })],
  ['an empty objectType', () => forged({ filterKey: '["",null]' })],
  ['an objectType of 5000 characters', () => forged({ filterKey: JSON.stringify(['x'.repeat(5000), null]) })],
  ['an action outside the enum', () => forged({ filterKey: '[null,"DROP TABLE"]' })],
  ['a filter spelled unlike the gateway spells it', () => forged({ filterKey: '[ "LOGIN", null ]' })],
];

describe('a forged resumeAfter token', () => {
  it.each(cases)('with %s is BAD_USER_INPUT over SSE and WebSocket, and reaches no upstream', async (_case, token) => {
    const before = server.sim.control.counters().audit;
    const started = server.liveAudit.stats().started;
    for (const subscribe of [subscribeSse, subscribeWs]) {
      const sub = subscribe(server.url, { resumeAfter: token() });
      await sub.received.until((r) => r.done);
      // SSE sends the errors as a result; graphql-ws's client throws those of an `error` message.
      const errors = sub.received.errors.length > 0 ? sub.received.errors : sub.received.failure;
      expect(errors).toMatchObject([{ message: MALFORMED, extensions: { code: 'BAD_USER_INPUT' } }]);
      if ('dispose' in sub.client) await sub.client.dispose();
    }
    expect(server.sim.control.counters().audit).toBe(before);
    expect(server.liveAudit.stats().started).toBe(started);
  });

  it('within what the arguments allow is accepted', async () => {
    const sub = await registered(server, () =>
      subscribeSse(server.url, { resumeAfter: forged({ floor: Date.now() - TOKEN_VALIDITY_MS + MINUTE }) }),
    );
    expect(sub.received.errors).toEqual([]);
    await sub.stop();
  });
});

describe('an issued resumeAfter token', () => {
  it('stays valid through a chain of resumes over a `since` backlog read in pieces', async () => {
    const objectType = 'ResumeChain';
    const since = Date.now() - TOKEN_VALIDITY_MS;
    const backlog = [1, 2, 3].map((second) => server.sim.control.insertEvents(1, { objectType, timestamp: since + second * 1000 })[0]!);
    const first = await registered(server, () => subscribeSse(server.url, { filter: { objectType }, since: new Date(since).toISOString() }));
    await first.received.until((r) => r.uuids.length === 3);
    await first.stop();
    // The client went away having handled the first record only; it comes back, and again. The
    // later tokens are issued seconds after `since` was 15 minutes back and still reach back to it.
    let token = tokenOf(first.received.payloads[0]);
    for (const record of backlog.slice(1)) {
      await sleep(1500);
      const next = await registered(server, () => subscribeSse(server.url, { resumeAfter: token }));
      await next.received.until((r) => r.uuids.length >= 1);
      expect(next.received.uuids[0]).toBe(record.uuid);
      token = tokenOf(next.received.payloads[0]);
      await next.stop();
    }
  });
});
