/**
 * The production build (`npm run build`: build.mjs) as the container runs it: dist/ copied to a
 * directory with no node_modules anywhere above it, started with `npm run start:prod`'s command.
 * Every part the bundle loads on demand is exercised: demo mode's simulator, GraphiQL's assets,
 * JWT callers, tracing, federation's SDL, live records over WebSocket.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestIssuer } from '../helpers/jwt-issuer.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { subscribeWs } from '../live/live-server.js';

const API_KEY = 'build-test-key';
const checkout = new URL('../..', import.meta.url).pathname;
const scripts = (JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
/** `npm run start:prod`'s node arguments: its flags and dist/index.js. */
const startArgs = scripts['start:prod']!.split(' ').filter((word) => !/^[A-Z_]+=/.test(word)).slice(1);

let dir: string;
let gateway: GatewayProcess;
let url: string;
const issuer = new TestIssuer();
let receiver: OtlpReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-build-'));
  execFileSync(process.execPath, [join(checkout, 'build.mjs'), `--outdir=${join(dir, 'dist')}`], { cwd: checkout, stdio: 'pipe' });
  await issuer.start();
  receiver = await startOtlpReceiver();
  gateway = runGateway(
    {
      NODE_ENV: 'production',
      GATEWAY_API_KEYS: API_KEY,
      GATEWAY_JWT_JWKS_URL: issuer.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'bundled-gateway',
      AUDIT_LIVE_POLL_MS: '100',
    },
    { args: startArgs, cwd: dir },
  );
  url = await gateway.ready;
}, 60_000);

afterAll(async () => {
  await gateway?.stop('SIGKILL');
  await Promise.all([issuer.close(), receiver?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const post = (query: string, headers: Record<string, string>) =>
  fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) });

describe('the production build, run on its own', () => {
  it('starts in demo mode from dist/ alone and answers an audit page', async () => {
    expect(startArgs.at(-1)).toBe('dist/index.js');
    expect(gateway.stdout()).toMatch(/DEMO MODE/);
    const response = await post('{ auditEvents(first: 2) { edges { node { __typename ... on AuditRecord { uuid } } } } }', { 'x-api-key': API_KEY });
    const body = (await response.json()) as { data: { auditEvents: { edges: { node: { __typename: string; uuid: string } }[] } } };
    expect(body.data.auditEvents.edges).toHaveLength(2);
    expect(body.data.auditEvents.edges[0]!.node.uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('admits a JWT caller verified against the JWKS, and refuses a token signed by another key', async () => {
    const withToken = await post('{ __typename }', { authorization: `Bearer ${issuer.token({ sub: 'someone' })}` });
    expect(await withToken.json()).toEqual({ data: { __typename: 'Query' } });
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = await post('{ __typename }', { authorization: `Bearer ${issuer.token({ sub: 'someone' }, stranger)}` });
    expect(forged.status).toBe(401);
  });

  it('sends the operation span to the OTLP endpoint', async () => {
    await post('query TracedInBundle { __typename }', { 'x-api-key': API_KEY });
    const span = await receiver.waitFor((s) => s.name.includes('TracedInBundle'), 15_000);
    expect(span.serviceName).toBe('bundled-gateway');
  });

  it("serves GraphiQL's page and its script", async () => {
    const page = await (await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } })).text();
    const script = /src="(\/graphiql\/graphiql\.[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${url}${script}`);
    expect(asset.status).toBe(200);
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
  });

  it('prints its subgraph SDL for routers, with the federation key', async () => {
    const response = await post('{ _service { sdl } }', { 'x-api-key': API_KEY });
    const body = (await response.json()) as { data: { _service: { sdl: string } } };
    expect(body.data._service.sdl).toMatch(/^type UpdateSession\s+@key\(fields: "id"\)/m);
  });

  it('delivers live audit records over WebSocket', async () => {
    const since = new Date(Date.now() - 600_000).toISOString();
    const live = subscribeWs(`${url}/graphql`, { since }, { 'x-api-key': API_KEY });
    try {
      await live.received.until((r) => r.nodes.length > 0, 15_000);
      expect(live.received.errors).toEqual([]);
    } finally {
      await live.stop();
      await live.client.dispose();
    }
  });

  it('carries the license of every bundled package', () => {
    const licenses = readFileSync(join(dir, 'dist', 'THIRD_PARTY_LICENSES.txt'), 'utf8');
    for (const name of ['graphql-yoga', 'graphql', 'undici', 'zod', '@pothos/core']) expect(licenses).toMatch(new RegExp(`^${name}@\\d`, 'm'));
  });

  it("keeps demo mode's simulator out of the gateway's files: built on its own, imported as #simulator", () => {
    const dist = join(dir, 'dist');
    const gatewayFiles = ['index.js', ...readdirSync(join(dist, 'chunks')).map((name) => join('chunks', name))].filter((f) => f.endsWith('.js'));
    const holdingSimulator = gatewayFiles.filter((file) => readFileSync(join(dist, file), 'utf8').includes('/__simulator/'));
    expect(holdingSimulator).toEqual([]);
    expect(readFileSync(join(dist, 'simulator.js'), 'utf8')).toContain('/__simulator/');
    expect(JSON.parse(readFileSync(join(dist, 'package.json'), 'utf8'))).toMatchObject({ imports: { '#simulator': './simulator.js' } });
  });
});
