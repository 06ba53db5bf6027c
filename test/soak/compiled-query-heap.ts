/**
 * Runs distinct audit operations through graphql-jit on the gateway's schema, each until it is hot,
 * then prints what the compiled-query cache counted for them and the heap freed by emptying it.
 * Run by compiled-query-heap.test.ts with `--expose-gc --no-compilation-cache`: without V8's
 * cache of compiled sources, the heap a compiled query took is freed with it.
 * argv: <aliases per operation> <operations> <runs of each>
 */
import { createYoga } from 'graphql-yoga';
import { loadConfig } from '../../src/lib/config.js';
import { ANONYMOUS, createGatewayContext, useOperationDeadline } from '../../src/gateway/context.js';
import { createLogger } from '../../src/lib/logger.js';
import { createCompiledQueries, useJitForAuditPages } from '../../src/gateway/plugins/compat/jit.js';
import { schema } from '../../src/gateway/schema/index.js';
import { startSimulator } from '../../simulator/index.js';
import { createUpstreams } from '../../src/upstream/index.js';
import { simulatorEnv } from '../helpers/simulator-env.js';

const [aliases, operations, runs] = process.argv.slice(2).map(Number) as [number, number, number];
const gc = (globalThis as { gc?: () => void }).gc!;

const sim = await startSimulator();
const config = loadConfig({ ...simulatorEnv(sim), GATEWAY_ALLOW_ANONYMOUS: 'true', AUDIT_CACHE_MAX_BYTES: '0' });
const upstreams = createUpstreams(config);
const log = createLogger({ level: 'silent' });
const compiledQueries = createCompiledQueries();
const yoga = createYoga({
  schema,
  logging: false,
  plugins: [useJitForAuditPages(compiledQueries), useOperationDeadline()],
  context: () => createGatewayContext({ upstreams, requestId: 'heap', log, caller: ANONYMOUS, requestTimeoutMs: config.requestTimeoutMs }),
});

const types = ['LoginEvent', 'LaunchEvent', 'LoginErrorEvent', 'LaunchErrorEvent', 'GroupEvent', 'AppEntitlementEvent', 'DirectorySyncProfileEvent', 'OtherAuditEvent'];
const everyField = 'uuid timestamp objectType objectAction objectId objectName baseType clientId deviceId organizationId sourceIp tenantId workspaceId values actor { userName domain }';
const page = `edges { cursor node { __typename ${types.map((type) => `... on ${type} { ${everyField} }`).join(' ')} } } pageInfo { hasNextPage endCursor }`;
const operation = (i: number) =>
  `{ ${Array.from({ length: aliases }, (_, k) => `p${i}_${k}: auditEvents(first: ${20 + k}) { ${page} }`).join(' ')} }`;

for (let i = 0; i < operations; i++) {
  const body = JSON.stringify({ query: operation(i) });
  for (let run = 0; run < runs; run++) {
    const response = await yoga.fetch('http://gateway.test/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const answer = (await response.json()) as { errors?: unknown[] };
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
  }
}
gc();
const kept = process.memoryUsage().heapUsed;
const counted = compiledQueries.cache.calculatedSize;
const entries = compiledQueries.cache.size;
compiledQueries.cache.clear();
gc();
const freed = kept - process.memoryUsage().heapUsed;
process.stdout.write(`${JSON.stringify({ entries, counted, freed })}\n`);
await upstreams.close();
await sim.close();
