/**
 * Hostile-input suite: property-based fuzzing of documents, variables and `_entities`
 * representations, and of a hostile upstream, against an in-process gateway. Every answer must be
 * JSON whose errors carry a contract code (never INTERNAL_SERVER_ERROR) and no rejection may go
 * unhandled. At full size against the real entry point, whose process must keep running within its
 * memory bound: test/soak/fuzz-entry-point.test.ts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS, type HostileKind } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectContractAnswer, type Answer } from './fuzz/contract-answer.js';
import { contractProperties } from './fuzz/contract-properties.js';
import { settleTicks, watchUnhandled } from './unhandled.js';

describe('hostile callers (in-process gateway over the simulator; at full size against the entry point in test/soak/)', () => {
  let gw: TestGateway;
  const unhandled = watchUnhandled();
  beforeAll(async () => {
    gw = await startTestGateway({ env: { LOG_LEVEL: 'warn' } });
  });
  afterAll(async () => {
    unhandled.stop();
    await gw.close();
  });

  const post = async (payload: unknown): Promise<Answer> => {
    const response = await gw.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(payload),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };

  contractProperties(post, { documents: 30, variables: 20, representations: 20 });

  it('is still serving afterwards, with no rejection unhandled', async () => {
    const answer = await post({ query: `{ updateSession(id: "${SESSION_IDS.ready}") { id } }` });
    expect(answer.body).toEqual({ data: { updateSession: { id: SESSION_IDS.ready } } });
    await settleTicks();
    expect(unhandled.errors).toEqual([]);
  });
});

describe('a hostile upstream (in-process gateway over the simulator)', () => {
  let gw: TestGateway;
  const unhandled = watchUnhandled();
  beforeAll(async () => {
    gw = await startTestGateway({
      simulator: { eventCount: 300 },
      env: { UPSTREAM_TIMEOUT_MS: '400', UPSTREAM_MAX_BODY_BYTES: String(256 * 1024), LOG_LEVEL: 'warn' },
    });
  });
  afterAll(async () => {
    unhandled.stop();
    await gw.close();
  });

  type Fault =
    | { readonly kind: HostileKind; readonly route: 'audit' | 'files' }
    | { readonly kind: 'inconsistent' | 'malformed' | 'status'; readonly route: 'audit' | 'files'; readonly status?: number };
  const fault: fc.Arbitrary<Fault> = fc.oneof(
    fc.record({ kind: fc.constantFrom<HostileKind>('huge-record', 'deep-record'), route: fc.constant('audit' as const) }),
    fc.record({
      kind: fc.constantFrom<HostileKind>('oversize-body', 'endless-body', 'reset-mid-body', 'drop-connection'),
      route: fc.constantFrom('audit' as const, 'files' as const),
    }),
    fc.record({ kind: fc.constant('inconsistent' as const), route: fc.constant('audit' as const) }),
    fc.record({ kind: fc.constant('malformed' as const), route: fc.constantFrom('audit' as const, 'files' as const) }),
    fc.record({
      kind: fc.constant('status' as const),
      route: fc.constantFrom('audit' as const, 'files' as const),
      status: fc.constantFrom(400, 404, 500, 503),
    }),
  );
  const operations = [
    '{ auditEvents(first: 20) { edges { node { ... on AuditRecord { uuid values } } } pageInfo { hasNextPage } } }',
    '{ auditEvents(last: 7) { edges { cursor } pageInfo { hasPreviousPage } } }',
    `{ updateSessionFiles(updateSessionId: "${SESSION_IDS.mixed}") { name status } }`,
    `{ _entities(representations: [{ __typename: "UpdateSession", id: "${SESSION_IDS.ready}" }, { __typename: "UpdateSession", id: "${SESSION_IDS.many}" }]) { ... on UpdateSession { id files { name } } } }`,
  ];

  const arm = (f: Fault, count: number) => {
    const { control } = gw.sim;
    if (f.kind === 'inconsistent') control.inconsistentPages(count);
    else if (f.kind === 'malformed') control.malformNext(f.route, count);
    else if (f.kind === 'status') control.failNext(count, f.status!, { route: f.route });
    else control.hostileNext(f.route, f.kind, { count, bytes: 512 * 1024 });
  };

  it('every fault ends as a contract error for its item, and the gateway recovers', async () => {
    await fc.assert(
      fc.asyncProperty(fault, fc.integer({ min: 1, max: 3 }), fc.constantFrom(...operations), async (f, count, query) => {
        gw.sim.control.clearFaults();
        arm(f, count);
        const response = await gw.fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        });
        expectContractAnswer({ status: response.status, body: (await response.json()) as Answer['body'] }, { f, query });
      }),
      { numRuns: 40 },
    );
    gw.sim.control.clearFaults();
    const healthy = await gw.execute(operations[0]!);
    expect(healthy.errors).toBeUndefined();
    await settleTicks();
    expect(unhandled.errors).toEqual([]);
  });
});
