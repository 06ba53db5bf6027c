/**
 * Apollo Gateway in front of the gateway with API-key auth on, composing by introspection with
 * `introspectionHeaders` and sending credentials from `RemoteGraphQLDataSource.willSendRequest`
 * (docs/routers/apollo-gateway.ts, as the README shows), in both set-ups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentRouter } from '../../docs/routers/apollo-gateway.js';
import { SESSION_IDS, UPDATE_SESSIONS } from '../../simulator/content-library-data.js';
import {
  ApolloGateway,
  driveApolloGateway,
  IntrospectAndCompose,
  quiet,
  type FederatedGateway,
} from '../helpers/federation.js';
import { ACROSS_ENTITIES, CONTENT_API_KEY, startSubgraphs, type Subgraphs } from '../helpers/routers.js';

let subgraphs: Subgraphs;
const routers: FederatedGateway[] = [];

const router = async (credential: 'router-key' | 'caller') => {
  const started = await driveApolloGateway(
    contentRouter({
      credential,
      routerApiKey: CONTENT_API_KEY,
      subgraphs: [
        { name: 'content', url: subgraphs.content.url },
        { name: 'deployments', url: subgraphs.deployments.url },
      ],
      logger: quiet,
    }),
  );
  routers.push(started);
  return started;
};

beforeAll(async () => {
  subgraphs = await startSubgraphs();
});

afterAll(async () => {
  await Promise.all(routers.map((r) => r.stop()));
  await subgraphs?.close();
});

const readyFiles = () =>
  UPDATE_SESSIONS.find((s) => s.id === SESSION_IDS.ready)!.files.map((f) => ({ name: f.name, status: f.status }));

describe('Apollo Gateway', { timeout: 20_000 }, () => {
  it('cannot compose by introspection without a key: the gateway answers 401', async () => {
    const gateway = new ApolloGateway({
      logger: quiet,
      supergraphSdl: new IntrospectAndCompose({ subgraphs: [{ name: 'content', url: subgraphs.content.url }] }),
    });
    await expect(gateway.load()).rejects.toThrow(/401|Authentication required/);
    await gateway.stop();
  });

  it('with its own key: answers across _entities for a caller without one, NOT_FOUND at its path', async () => {
    const { data, errors } = await (await router('router-key')).execute(ACROSS_ENTITIES);
    expect(data?.deployments).toEqual([
      { id: 'dep-1', session: { id: SESSION_IDS.ready, files: readyFiles() } },
      { id: 'dep-2', session: null },
      { id: 'dep-3', session: null },
    ]);
    expect(errors).toHaveLength(1);
    expect(errors![0]).toMatchObject({ path: ['deployments', 1, 'session'], extensions: { code: 'NOT_FOUND' } });
  });

  it("forwarding the caller's credential: answers for a caller with a key, UNAUTHENTICATED for one without", async () => {
    const forwarding = await router('caller');
    const withKey = await forwarding.execute(ACROSS_ENTITIES, {}, { apiKey: CONTENT_API_KEY });
    expect(withKey.data?.deployments[0].session).toEqual({ id: SESSION_IDS.ready, files: readyFiles() });
    expect(withKey.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);

    for (const context of [{}, { apiKey: 'not-a-key-of-the-gateway' }]) {
      const refused = await forwarding.execute(ACROSS_ENTITIES, {}, context);
      expect(refused.data?.deployments.map((d: any) => d.session)).toEqual([null, null, null]);
      expect(new Set(refused.errors?.map((e) => e.extensions?.code))).toEqual(new Set(['UNAUTHENTICATED']));
    }
  });
});
