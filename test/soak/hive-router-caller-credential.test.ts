/**
 * Hive Gateway (the `hive-gateway` binary) in front of the gateway with API-key auth on, forwarding
 * each caller's own credential (docs/routers/hive-gateway.caller-credential.config.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS } from '../../simulator/content-library-data.js';
import {
  ACROSS_ENTITIES,
  CONTENT_API_KEY,
  postTo,
  ROUTER_START_MS,
  runHiveGateway,
  startSubgraphs,
  type RouterProcess,
  type Subgraphs,
} from '../helpers/routers.js';

let subgraphs: Subgraphs;
let router: RouterProcess;

beforeAll(async () => {
  subgraphs = await startSubgraphs();
  router = await runHiveGateway({
    configPath: 'docs/routers/hive-gateway.caller-credential.config.ts',
    supergraphSdl: subgraphs.supergraphSdl,
  });
}, ROUTER_START_MS + 30_000);

afterAll(async () => {
  await router?.stop();
  await subgraphs?.close();
});

describe("Hive Gateway forwarding the caller's credential", { timeout: 20_000 }, () => {
  it("answers across _entities with the caller's key, NOT_FOUND included", async () => {
    const { body } = await postTo(router.url, ACROSS_ENTITIES, { 'x-api-key': CONTENT_API_KEY });
    expect(body.data?.deployments.map((d: any) => d.session?.id ?? null)).toEqual([SESSION_IDS.ready, null, null]);
    expect(body.data?.deployments[0].session.files.length).toBeGreaterThan(0);
    expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
  });

  it("passes the gateway's UNAUTHENTICATED on to a caller without a key, or with a wrong one", async () => {
    for (const headers of [{}, { 'x-api-key': 'not-a-key-of-the-gateway' }] as Record<string, string>[]) {
      const { body } = await postTo(router.url, ACROSS_ENTITIES, headers);
      expect(body.data?.deployments.map((d: any) => d.session)).toEqual([null, null, null]);
      expect(body.errors?.map((e) => e.extensions?.code)).toContain('UNAUTHENTICATED');
    }
  });
});
