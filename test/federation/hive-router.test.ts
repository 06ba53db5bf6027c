/**
 * Hive Gateway (the `hive-gateway` binary) in front of the gateway with API-key auth on, sending a
 * key of its own to the gateway (docs/routers/hive-gateway.router-key.config.ts, as the README shows).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS, UPDATE_SESSIONS } from '../../src/simulator/content-library-data.js';
import {
  ACROSS_ENTITIES,
  CONTENT_API_KEY,
  postTo,
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
    configPath: 'docs/routers/hive-gateway.router-key.config.ts',
    supergraphSdl: subgraphs.supergraphSdl,
    env: { CONTENT_GATEWAY_API_KEY: CONTENT_API_KEY },
  });
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await subgraphs?.close();
});

describe('Hive Gateway sending its own key', { timeout: 20_000 }, () => {
  it('answers across _entities and carries NOT_FOUND with its code and path', async () => {
    const { status, body } = await postTo(router.url, ACROSS_ENTITIES);
    expect(status).toBe(200);
    const readyFiles = UPDATE_SESSIONS.find((s) => s.id === SESSION_IDS.ready)!.files.map((f) => ({ name: f.name, status: f.status }));
    expect(body.data?.deployments).toEqual([
      { id: 'dep-1', session: { id: SESSION_IDS.ready, files: readyFiles } },
      { id: 'dep-2', session: null },
      { id: 'dep-3', session: null },
    ]);
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]!.extensions?.code).toBe('NOT_FOUND');
    // Hive Gateway points at the field of the entity that failed, below the client's session.
    expect(body.errors![0]!.path?.slice(0, 3)).toEqual(['deployments', 1, 'session']);
  });

  it('is the one that authenticates: the gateway itself refuses a request without a key', async () => {
    const direct = await postTo(subgraphs.content.url, '{ _service { sdl } }');
    expect(direct.status).toBe(401);
    expect(direct.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
