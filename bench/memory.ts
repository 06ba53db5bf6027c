/**
 * The gateway's memory under the worst request mix its limits allow, on the production build and
 * node flags (`--max-old-space-size=256`). `npx tsx bench/memory.ts [seconds]` (default 30).
 *
 * Mixed and concurrent for the whole run:
 * - rows: operations of the full audit-row budget (two 5000-row pages, every field), 16 at once
 *   (LARGE_OPERATION_CONCURRENCY lets 4 run, the rest wait);
 * - entities: `_entities` with the 100-representation cap over the 150-file session, every file
 *   field with errorMessage three levels deep, 8 at once;
 * - fan-out: 30 aliases of `last: 5` over distinct filters, 8 at once;
 * - near-cap bodies: the simulator answers audit pages of just under UPSTREAM_MAX_BODY_BYTES, 4 at once.
 *
 * V8 heap in use is sampled from the gateway's own /metrics (nodejs_heap_size_used_bytes) every
 * 100 ms; peak RSS is VmHWM from /proc. The upstream deadline is raised so that every request
 * completes (a timed-out call would hold less). Prints one JSON summary.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { SESSION_IDS } from '../simulator/index.js';
import { API_KEY, buildGateway, memoryOf, startGateway, startSimulatorProcess } from './processes.js';

const seconds = Number(process.argv[2] ?? 30);
const HEAP_CAP_MB = 256;
const BODY_CAP = 16 * 1024 * 1024;

const RECORD = `__typename ... on AuditRecord { uuid baseType timestamp organizationId tenantId actor { id userName domain uuid }
  clientId deviceId workspaceId sourceIp objectType objectId objectName objectAction values }
  ... on LoginEvent { success authMethods deviceType actorExternalId failureMessage }`;
const PARAM = 'key value { dt s d precision format i }';
const FILE = `name sourceType size bytesTransferred status checksumInfo { algorithm checksum }
  sourceEndpoint { uri scheme } uploadEndpoint { uri scheme }
  errorMessage { id defaultMessage args params { ${PARAM} value { l { id params { ${PARAM} value { l { id params { ${PARAM} value { l { id params { ${PARAM} } } } } } } } } } } }`;

const operations = {
  rows: `{ a: auditEvents(first: 5000) { edges { cursor node { ${RECORD} } } pageInfo { hasNextPage } }
           b: auditEvents(first: 5000, filter: { objectType: "LOGIN" }) { edges { cursor node { ${RECORD} } } } }`,
  entities: `query ($r: [_Any!]!) { _entities(representations: $r) { ... on UpdateSession { id files { ${FILE} } } } }`,
  fanOut: `{ ${Array.from({ length: 30 }, (_, i) => `a${i}: auditEvents(last: 5, filter: { objectType: "type-${i}" }) { edges { cursor } }`).join(' ')} }`,
  nearCap: `{ auditEvents(first: 10, filter: { objectType: "near-cap" }) { edges { cursor } } }`,
};
const entityVariables = { r: Array.from({ length: 100 }, () => ({ __typename: 'UpdateSession', id: SESSION_IDS.many })) };

await buildGateway();
const simulator = await startSimulatorProcess(1);
const gateway = await startGateway({ simulatorUrl: simulator.url, env: { AUDIT_CACHE_MAX_BYTES: '0', UPSTREAM_TIMEOUT_MS: '120000' } });

const post = async (query: string, variables?: unknown) => {
  const res = await request(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': API_KEY },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.body.json()) as { errors?: { extensions?: { code?: string } }[] };
  return body.errors?.map((e) => e.extensions?.code ?? '?') ?? [];
};
const control = (path: string, body: unknown) =>
  request(`${simulator.url}/__simulator/${path}`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.body.dump());

let running = true;
const counts: Record<string, { requests: number; errors: Record<string, number> }> = {};
const worker = async (name: string, send: () => Promise<string[]>) => {
  const tally = (counts[name] ??= { requests: 0, errors: {} });
  while (running) {
    const codes = await send().catch((error: Error) => [error.message.slice(0, 60)]);
    tally.requests++;
    for (const code of codes) tally.errors[code] = (tally.errors[code] ?? 0) + 1;
  }
};
const workers = (name: string, n: number, send: () => Promise<string[]>) => Array.from({ length: n }, () => worker(name, send));

let peakHeapMB = 0;
const sampler = (async () => {
  while (running) {
    const text = await request(`${gateway.url}/metrics`).then((r) => r.body.text(), () => '');
    const used = Number(/^nodejs_heap_size_used_bytes (\d+)/m.exec(text)?.[1] ?? 0) / 1024 / 1024;
    peakHeapMB = Math.max(peakHeapMB, used);
    await sleep(100);
  }
})();

const started = Date.now();
const load = [
  ...workers('rows', 16, () => post(operations.rows)),
  ...workers('entities', 8, () => post(operations.entities, entityVariables)),
  ...workers('fanOut', 8, () => post(operations.fanOut)),
  ...workers('nearCap', 4, async () => {
    await control('hostile-next', { route: 'audit', kind: 'oversize-body', bytes: BODY_CAP - 4096 });
    return post(operations.nearCap);
  }),
];
await sleep(seconds * 1000);
running = false;
await Promise.all([...load, sampler]);
const memory = memoryOf(gateway.pid);
const alive = gateway.output().includes('heap out of memory') ? false : (await request(`${gateway.url}/healthz`)).statusCode === 200;
await gateway.stop();
await simulator.stop();

process.stdout.write(
  `${JSON.stringify(
    {
      seconds: Math.round((Date.now() - started) / 1000),
      node: process.version,
      alive,
      peakHeapUsedMB: Math.round(peakHeapMB),
      heapCapMB: HEAP_CAP_MB,
      heapMarginMB: Math.round(HEAP_CAP_MB - peakHeapMB),
      peakRssMB: memory ? Math.round(memory.peakMB) : null,
      requests: counts,
    },
    null,
    2,
  )}\n`,
);
