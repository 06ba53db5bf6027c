/**
 * The gateway as a Federation v2 subgraph, proven with real tooling: its SDL composes with a
 * second subgraph (@theguild/federation-composition, and Apollo's own composition through
 * IntrospectAndCompose), and an ApolloGateway answers one operation from both subgraphs over HTTP.
 */
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { subgraphSdl } from '../../src/gateway/schema/index.js';
import { MISSING_SESSION_ID, SESSION_IDS, UPDATE_SESSIONS } from '../../simulator/content-library-data.js';
import {
  DEPLOYMENTS_SDL,
  deploymentsSubgraph,
  IntrospectAndCompose,
  listen,
  startApolloGateway,
  type FederatedGateway,
  type Listening,
} from '../helpers/federation.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const DEPLOYMENTS = [
  { id: 'dep-1', sessionId: SESSION_IDS.ready },
  { id: 'dep-2', sessionId: SESSION_IDS.ready },
  { id: 'dep-3', sessionId: SESSION_IDS.empty },
  { id: 'dep-4', sessionId: null },
  { id: 'dep-5', sessionId: MISSING_SESSION_ID },
  { id: 'dep-6', sessionId: SESSION_IDS.error },
];

const FEDERATED_QUERY = /* GraphQL */ `
  {
    deployments {
      id
      session {
        id
        files { name size status }
      }
    }
  }
`;

let gw: TestGateway;
let content: Listening;
let deployments: Listening;
const routers: FederatedGateway[] = [];

function compose() {
  return composeServices([
    { name: 'content', typeDefs: parse(subgraphSdl()), url: content.url },
    { name: 'deployments', typeDefs: parse(DEPLOYMENTS_SDL), url: deployments.url },
  ]);
}

beforeAll(async () => {
  gw = await startTestGateway();
  content = await listen(gw.yoga);
  deployments = await listen(deploymentsSubgraph(DEPLOYMENTS));
});

afterAll(async () => {
  await Promise.all(routers.map((router) => router.stop()));
  await Promise.all([content?.close(), deployments?.close()]);
  await gw?.close();
});

beforeEach(() => {
  gw.sim.control.resetCounters();
});

describe('federation subgraph', { timeout: 15_000 }, () => {
  it('serves _service { sdl }, the same SDL subgraphSdl() prints', async () => {
    const { data, errors } = await gw.execute('{ _service { sdl } }');
    expect(errors).toBeUndefined();
    expect(`${data._service.sdl.trimEnd()}\n`).toBe(subgraphSdl());
  });

  it('composes with a second subgraph (@theguild/federation-composition)', () => {
    const result = compose();
    if (compositionHasErrors(result)) throw new Error(result.errors.map((e) => e.message).join('\n'));
    const supergraph = result.supergraphSdl;
    expect(supergraph).toMatch(/CONTENT @join__graph\(name: "content", url: "http:\/\/127\.0\.0\.1:\d+\/graphql"\)/);
    expect(supergraph).toMatch(/DEPLOYMENTS @join__graph\(name: "deployments"/);
    expect(supergraph).toMatch(/type UpdateSession\s+@join__type\(graph: CONTENT, key: "id"\)/);
    expect(supergraph).toMatch(/@join__type\(graph: DEPLOYMENTS, key: "id", resolvable: false\)/);
    expect(supergraph).toContain('type Deployment');
    // The argument carries its description, so the field may span lines.
    expect(supergraph).toMatch(/updateSessionFiles\(\s*(?:"""[^"]*"""\s*)?updateSessionId: ID!\s*\): \[UpdateSessionFile!\]/);
  });

  it('answers one operation from both subgraphs through an ApolloGateway', async () => {
    const result = compose();
    if (compositionHasErrors(result)) throw new Error('composition failed');
    const router = await startApolloGateway(result.supergraphSdl);
    routers.push(router);

    const { data, errors } = await router.execute(FEDERATED_QUERY);
    const readyFiles = UPDATE_SESSIONS.find((s) => s.id === SESSION_IDS.ready)!.files.map((f) => ({
      name: f.name,
      size: f.size ?? null,
      status: f.status,
    }));
    expect(data?.deployments).toEqual([
      { id: 'dep-1', session: { id: SESSION_IDS.ready, files: readyFiles } },
      { id: 'dep-2', session: { id: SESSION_IDS.ready, files: readyFiles } },
      { id: 'dep-3', session: { id: SESSION_IDS.empty, files: [] } },
      { id: 'dep-4', session: null },
      { id: 'dep-5', session: null },
      { id: 'dep-6', session: { id: SESSION_IDS.error, files: [{ name: 'centos-stream-9.iso', size: null, status: 'ERROR' }] } },
    ]);
    // The unknown session is the only error, with the gateway's code and the client's path.
    expect(errors).toHaveLength(1);
    expect(errors![0]).toMatchObject({
      path: ['deployments', 4, 'session'],
      extensions: { code: 'NOT_FOUND', serviceName: 'content' },
    });
    // One _entities fetch, deduplicated per session: ready, empty, missing, error.
    expect(gw.sim.control.counters().files).toBe(4);
  });

  it('carries an errorMessage nested three l levels deep through _entities (within the limits)', async () => {
    const result = compose();
    if (compositionHasErrors(result)) throw new Error('composition failed');
    const router = await startApolloGateway(result.supergraphSdl);
    routers.push(router);
    const param = 'key value { dt s d precision format i }';
    const { data, errors } = await router.execute(`{
      deployments {
        session {
          files {
            errorMessage {
              id defaultMessage localized args
              params { ${param} value { l { id params { ${param} value { l { id params { ${param} value { l { id params { ${param} } } } } } } } } } }
            }
          }
        }
      }
    }`);
    expect(errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
    const message = data?.deployments[5].session.files[0].errorMessage;
    expect(message.params[4].value.l.params[1].value.l.params[1].value.l).toMatchObject({
      id: 'com.vmware.vdcs.net.connection_refused',
      params: [{ key: 'port', value: { i: 80 } }, { key: 'at', value: { dt: '2024-03-05T14:22:30.512Z' } }],
    });
  });

  it("is accepted by Apollo's own composition over _service { sdl } (IntrospectAndCompose)", async () => {
    const router = await startApolloGateway(
      new IntrospectAndCompose({
        subgraphs: [
          { name: 'content', url: content.url },
          { name: 'deployments', url: deployments.url },
        ],
      }),
    );
    routers.push(router);
    const { data, errors } = await router.execute(
      `{ deployments { id session { files { name } } } updateSession(id: "${SESSION_IDS.empty}") { id files { name } } }`,
    );
    expect(data?.updateSession).toEqual({ id: SESSION_IDS.empty, files: [] });
    expect(data?.deployments[0].session.files.length).toBe(3);
    expect(errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
  });
});
