/**
 * Distinct documents by the hundred against the running gateway, its heap capped at 160 MB (about
 * 55 MB in use once started under tsx): what it keeps of them (parsed documents, parse errors,
 * compiled queries) is bounded in bytes, so the process keeps serving. Each flood alone keeps more
 * than the cap's headroom in caches bounded by their number of entries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGateway, type GatewayProcess } from '../helpers/process.js';

const types = ['LoginEvent', 'LaunchEvent', 'LoginErrorEvent', 'LaunchErrorEvent', 'GroupEvent', 'AppEntitlementEvent', 'DirectorySyncProfileEvent', 'OtherAuditEvent'];
const everyField = 'uuid timestamp objectType objectAction objectId objectName baseType clientId deviceId organizationId sourceIp tenantId workspaceId values actor { userName domain }';
const page = `edges { cursor node { __typename ${types.map((type) => `... on ${type} { ${everyField} }`).join(' ')} } } pageInfo { hasNextPage endCursor }`;
const words = (count: number, word: (i: number) => string) => Array.from({ length: count }, (_, i) => word(i)).join(' ');

describe('distinct documents by the hundred against the running gateway (heap capped at 160 MB)', () => {
  let gateway: GatewayProcess;
  let url: string;
  beforeAll(async () => {
    gateway = runGateway({ NODE_OPTIONS: '--max-old-space-size=160', LOG_LEVEL: 'info' });
    url = await gateway.ready;
  }, 90_000);
  afterAll(async () => {
    await gateway.stop('SIGKILL');
  });

  const post = async (query: string) => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query }),
    });
    const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
    return body.errors?.[0]?.extensions?.code ?? 'OK';
  };

  /** Sends every document, eight at a time, each `times` in a row; answers with the codes seen. */
  async function flood(count: number, document: (i: number) => string, times = 1): Promise<Set<string>> {
    const codes = new Set<string>();
    for (let i = 0; i < count; i += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, count - i) }, async (_, k) => {
          for (let t = 0; t < times; t++) codes.add(await post(document(i + k)));
        }),
      );
    }
    return codes;
  }

  it('parses 500 documents of 250 KB of comment', { timeout: 60_000 }, async () => {
    expect(await flood(500, (i) => `#${i} ${'x'.repeat(250_000)}\n{ __typename }`)).toEqual(new Set(['OK']));
  });

  it('parses 200 documents of 4000 tokens', { timeout: 60_000 }, async () => {
    const document = (i: number) => `{ e${i}: _entities(representations: [${words(3980, () => '1')}]) { __typename } }`;
    expect(await flood(200, document)).toEqual(new Set(['BAD_USER_INPUT']));
  });

  it('fails to parse 300 documents at the token limit', { timeout: 60_000 }, async () => {
    const document = (i: number) => `{ a${i}: __typename ${words(4100, () => '__typename')} }`;
    expect(await flood(300, document)).toEqual(new Set(['GRAPHQL_PARSE_FAILED']));
  });

  it('fails to validate 60 documents of 4000 unknown fields', { timeout: 60_000 }, async () => {
    const document = (i: number) => `{ a${i}: __typename ${words(3980, (k) => `f${k}`)} }`;
    expect(await flood(60, document)).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
  });

  it('compiles 40 audit documents of 6 full pages, each sent twice', { timeout: 120_000 }, async () => {
    // About 7 MB counted each: an operation may take up to 8 MB of the 32.
    const document = (i: number) => `{ ${words(6, (k) => `p${i}_${k}: auditEvents(first: 0, filter: { objectType: "X${k}" }) { ${page} }`)} }`;
    expect(await flood(40, document, 2)).toEqual(new Set(['OK']));
  });

  it('is still running and serving afterwards', async () => {
    expect(gateway.child.exitCode).toBeNull();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(gateway.stderr()).not.toMatch(/heap out of memory/);
  });
});
