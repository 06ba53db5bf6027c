/**
 * One upstream down never empties the response: over real HTTP, each upstream in turn is refused
 * (nothing listens), answers 503, or rejects the gateway's own credentials, and the fields of the
 * other upstream still come back beside an error at the failed field's path.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type GraphQLResponse, type TestGateway } from '../helpers/gateway.js';
import { listen, type Listening } from '../helpers/listen.js';

const QUERY = /* GraphQL */ `
  query ($id: ID!, $r: [_Any!]!) {
    files: updateSessionFiles(updateSessionId: $id) { name }
    session: updateSession(id: $id) { id files { name } }
    _entities(representations: $r) { ... on UpdateSession { id } }
    auditEvents(first: 1) { totalCount edges { cursor } }
  }
`;
const VARIABLES = { id: SESSION_IDS.ready, r: [{ __typename: 'UpdateSession', id: SESSION_IDS.ready }] };

/** A loopback URL where nothing listens: every connection is refused. */
let refusedUrl: string;
beforeAll(async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  refusedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let running: { gw: TestGateway; server: Listening } | undefined;
afterEach(async () => {
  await running?.server.close();
  await running?.gw.close();
  running = undefined;
});

async function served(env: Record<string, string> = {}): Promise<TestGateway> {
  const gw = await startTestGateway({ simulator: { eventCount: 20 }, env: { UPSTREAM_TIMEOUT_MS: '3000', ...env } });
  running = { gw, server: await listen(gw.yoga) };
  return gw;
}

async function post(): Promise<GraphQLResponse> {
  const response = await fetch(running!.server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: QUERY, variables: VARIABLES }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as GraphQLResponse;
}

const codes = (response: GraphQLResponse) =>
  Object.fromEntries((response.errors ?? []).map((e) => [JSON.stringify(e.path), e.extensions?.code]));

/** What the content library's fields answer when it is up. */
const sessionFieldsUp = (response: GraphQLResponse) => {
  expect(response.data?.files?.length).toBeGreaterThan(0);
  expect(response.data?.session).toEqual({ id: SESSION_IDS.ready, files: response.data?.files });
  expect(response.data?._entities).toEqual([{ id: SESSION_IDS.ready }]);
};

describe('the identity service down', () => {
  it.each([
    ['refusing connections', () => ({ IDENTITY_BASE_URL: refusedUrl }), 'UPSTREAM_UNAVAILABLE'],
    ['with its token endpoint answering 503', () => ({}), 'UPSTREAM_UNAVAILABLE'],
    ['refusing the client credentials', () => ({ IDENTITY_CLIENT_SECRET: 'not-the-secret' }), 'UPSTREAM_UNAUTHORIZED'],
  ])('%s: auditEvents is null with its error, the update session fields come back', async (name, env, code) => {
    const gw = await served(env());
    if (name.includes('503')) gw.sim.control.failNext(1000, 503, { route: 'token' });
    const response = await post();
    sessionFieldsUp(response);
    expect(response.data?.auditEvents).toBeNull();
    expect(codes(response)).toEqual({ '["auditEvents"]': code });
  });
});

describe('the content library down', () => {
  it.each([
    ['refusing connections', () => ({ CONTENT_LIBRARY_URL: refusedUrl }), 'UPSTREAM_UNAVAILABLE'],
    ['refusing the session login', () => ({ CONTENT_LIBRARY_PASSWORD: 'not-the-password' }), 'UPSTREAM_UNAUTHORIZED'],
  ])('%s: its fields are null with their errors, auditEvents comes back', async (_name, env, code) => {
    await served(env());
    const response = await post();
    expect(response.data).toMatchObject({ files: null, session: null, _entities: [null] });
    expect(response.data?.auditEvents.totalCount).toBe(20);
    expect(response.data?.auditEvents.edges).toHaveLength(1);
    expect(codes(response)).toEqual({ '["files"]': code, '["session"]': code, '["_entities",0]': code });
  });
});

it('both down in one request: every field null with its own error, data still an object', async () => {
  await served({ IDENTITY_BASE_URL: refusedUrl, CONTENT_LIBRARY_URL: refusedUrl });
  const response = await post();
  expect(response.data).toEqual({ files: null, session: null, _entities: [null], auditEvents: null });
  expect(codes(response)).toEqual({
    '["files"]': 'UPSTREAM_UNAVAILABLE',
    '["session"]': 'UPSTREAM_UNAVAILABLE',
    '["_entities",0]': 'UPSTREAM_UNAVAILABLE',
    '["auditEvents"]': 'UPSTREAM_UNAVAILABLE',
  });
});
