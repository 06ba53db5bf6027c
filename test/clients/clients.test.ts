/**
 * The client programs of this folder, typed by the documented codegen set-up, against the gateway
 * (simulator + yoga, as in demo mode): Apollo Client and urql graphcache page three pages with the
 * shipped possibleTypes and keep every field; a @stream consumer gets the first rows first.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { createApolloClient, pageWithApollo } from './apollo-client.js';
import { GATEWAY_URL, gatewayFetch } from './gateway-fetch.js';
import { streamAuditPage } from './stream-consumer.js';
import { createUrqlClient, pageWithUrql } from './urql-client.js';

const HOUR = 3_600_000;
let gw: TestGateway;
/** A closed window: every client sees the same records in the same order. */
let filter: { from: string; to: string };
let expectedUuids: string[];

beforeAll(async () => {
  gw = await startTestGateway({ simulator: { eventCount: 2000 } });
  const to = Date.now() - 60_000;
  filter = { from: new Date(to - 48 * HOUR).toISOString(), to: new Date(to).toISOString() };
  const plain = await gw.execute('query($filter: AuditEventFilter) { auditEvents(first: 60, filter: $filter) { edges { node { ... on AuditRecord { uuid } } } } }', { filter });
  expectedUuids = plain.data.auditEvents.edges.map((edge: { node: { uuid: string } }) => edge.node.uuid);
});
afterAll(() => gw?.close());

/** Library warnings (missing fields, missing keys) go to the console. */
const consoleNoise = () => [vi.spyOn(console, 'warn'), vi.spyOn(console, 'error')];
afterEach(() => vi.restoreAllMocks());

function expectThreeFullPages(page: { totalCount: number; edges: { node: Record<string, unknown> }[] }) {
  expect(page.edges).toHaveLength(60);
  expect(page.edges.map((edge) => edge.node['uuid'])).toEqual(expectedUuids);
  for (const { node } of page.edges) {
    expect(node).toHaveProperty('uuid');
    expect(node).toHaveProperty('timestamp');
    expect(node).toHaveProperty('actor');
    expect(node['timestamp']).toMatch(/^\d{4}-\d\d-\d\dT/);
  }
  expect(page.totalCount).toBeGreaterThanOrEqual(60);
}

describe('client programs', { timeout: 30_000 }, () => {
  it('Apollo Client pages three pages with the shipped possibleTypes and keeps every field', async () => {
    const noise = consoleNoise();
    const client = createApolloClient(GATEWAY_URL, gatewayFetch(gw));
    expectThreeFullPages(await pageWithApollo(client, { first: 20, filter }, 3));
    for (const spy of noise) expect(spy).not.toHaveBeenCalled();
  });

  it('urql graphcache pages three pages without a warning', async () => {
    const noise = consoleNoise();
    const client = createUrqlClient(GATEWAY_URL, gatewayFetch(gw));
    expectThreeFullPages(await pageWithUrql(client, { first: 20, filter }, 3));
    for (const spy of noise) expect(spy).not.toHaveBeenCalled();
  });

  it('a @stream consumer gets the first rows before the rest of a large page', async () => {
    const batches: { rows: number; hasNext: boolean }[] = [];
    const page = await streamAuditPage(GATEWAY_URL, gatewayFetch(gw), { first: 1500, initialCount: 25 }, (rows, hasNext) =>
      batches.push({ rows: rows.length, hasNext }),
    );
    expect(batches[0]).toEqual({ rows: 25, hasNext: true });
    expect(batches.length).toBeGreaterThan(1);
    expect(page.errors).toEqual([]);
    expect(page.edges).toHaveLength(1500);
    expect(new Set(page.edges.map((edge) => edge.cursor)).size).toBe(1500);
    expect(page.pageInfo?.endCursor).toBe(page.edges.at(-1)?.cursor);
  });
});
