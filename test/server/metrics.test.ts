import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperationNameLabels } from '../../src/gateway/plugins/observability/metrics.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/** Metric families of a scrape: name, type and every label name seen on their samples. */
function families(scrape: string) {
  const types = new Map<string, string>();
  for (const line of scrape.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (m) types.set(m[1]!, m[2]!);
  }
  const labels = new Map<string, Set<string>>();
  for (const line of scrape.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)\{(.*)\} /.exec(line);
    if (!m) continue;
    const set = labels.get(m[1]!) ?? new Set<string>();
    for (const pair of m[2]!.matchAll(/(\w+)="/g)) set.add(pair[1]!);
    labels.set(m[1]!, set);
  }
  return { types, labels };
}

/** Samples of GraphQL metrics: the series a caller could try to multiply. */
const graphqlSeries = (scrape: string) => scrape.split('\n').filter((l) => l.startsWith('graphql_'));

describe('metrics labels stay bounded', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());
  const scrape = async () => (await gateway.fetch('/metrics')).text();

  it('distinct operation names and query strings past the name table do not grow the scrape', async () => {
    const named = (i: number) => gateway.execute(`query Op${i}_${'x'.repeat(i % 50)} { __typename }`);
    const viaGet = (i: number) =>
      gateway.fetch(`/graphql?query=${encodeURIComponent(`query Get${i} { __typename }`)}&variables=%7B%22secret%22%3A${i}%7D`, {
        headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1', host: `tenant-${i}.example.com` },
      });
    // Fill the table of 100 names (120 distinct ones), then keep going with 100 more: nothing new may appear.
    const batch = (from: number) => Promise.all(Array.from({ length: 10 }, (_, k) => Promise.all([named(from + k), viaGet(from + k)])));
    for (let i = 0; i < 60; i += 10) await batch(i);
    const settled = graphqlSeries(await scrape()).map((l) => l.slice(0, l.lastIndexOf(' ')));
    for (let i = 60; i < 110; i += 10) await batch(i);
    await gateway.execute(`query ${'Long'.repeat(50_000)} { __typename }`);
    const after = await scrape();
    const series = graphqlSeries(after).map((l) => l.slice(0, l.lastIndexOf(' ')));
    expect(new Set(series)).toEqual(new Set(settled));
    expect(after).not.toMatch(/url=|host=|secret|tenant-|LongLong/);
    expect(after).toMatch(/operation_name="other"/);
  }, 120_000);

  it('names follow Prometheus conventions: counters end in _total, durations are _seconds histograms', async () => {
    await gateway.execute('query Conventions { __typename }');
    await gateway.execute('{ auditEvents(first: -1) { edges { cursor } } }');
    const { types, labels } = families(await scrape());
    const counters = [...types].filter(([, type]) => type === 'counter').map(([name]) => name);
    expect(counters.length).toBeGreaterThan(5);
    for (const name of counters) expect(name).toMatch(/_total$/);
    const durations = [...types.keys()].filter((name) => /duration|latency|time/.test(name) && !name.startsWith('process_'));
    for (const name of durations) {
      expect(name).toMatch(/_seconds(_total)?$/);
    }
    for (const name of ['graphql_envelop_request_duration_seconds', 'graphql_yoga_http_duration_seconds', 'gateway_upstream_request_duration_seconds']) {
      expect(types.get(name)).toBe('histogram');
    }
    expect(types.get('graphql_envelop_request_total')).toBe('counter');
    expect(types.get('graphql_envelop_error_result_total')).toBe('counter');
    for (const [name, set] of labels) {
      for (const label of set) expect(`${name}{${label}}`).toMatch(/\{(le|quantile|[a-z][a-z0-9_]*)\}$/);
      expect(set.has('url')).toBe(false);
      expect(set.has('path')).toBe(false);
    }
  });

  it('histogram buckets span milliseconds to tens of seconds', async () => {
    const text = await scrape();
    const buckets = [...text.matchAll(/^graphql_yoga_http_duration_seconds_bucket\{le="([^"]+)"/gm)].map((m) => m[1]);
    expect(buckets).toContain('0.005');
    expect(buckets).toContain('30');
  });
});

describe('METRICS_TOKEN', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ env: { METRICS_TOKEN: 'scrape-token' } });
  });
  afterAll(() => gateway.close());

  it('requires the token as a bearer token on /metrics, scheme in any case', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: 'scrape-token' }] as Record<string, string>[]) {
      const refused = await gateway.fetch('/metrics', { headers });
      expect(refused.status).toBe(401);
      expect(await refused.text()).not.toMatch(/graphql_|process_/);
    }
    for (const scheme of ['Bearer', 'bearer']) {
      const scraped = await gateway.fetch('/metrics', { headers: { authorization: `${scheme} scrape-token` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(/process_cpu_user_seconds_total/);
    }
  });

  it('leaves GraphQL, health and readiness alone', async () => {
    expect((await gateway.fetch('/healthz')).status).toBe(200);
    expect((await gateway.execute('{ __typename }')).data).toEqual({ __typename: 'Query' });
  });
});

describe('operation name table', () => {
  it('records the first N distinct well-formed names, the rest as other', () => {
    const table = new OperationNameLabels(2);
    expect(table.label(undefined)).toBe('anonymous');
    expect(table.label('A')).toBe('A');
    expect(table.label('B')).toBe('B');
    expect(table.label('C')).toBe('other');
    expect(table.label('A')).toBe('A');
    expect(table.label('B')).toBe('B');
    expect(new OperationNameLabels(10).label('x'.repeat(65))).toBe('other');
  });
});
