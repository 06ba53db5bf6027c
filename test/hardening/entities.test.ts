/**
 * `_entities` under hostile representations: each one settles on its own, bad ones are
 * BAD_USER_INPUT at their own index, nothing is left unawaited, and nothing bad reaches an upstream.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MISSING_SESSION_ID, SESSION_IDS } from '../../simulator/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { settleTicks, watchUnhandled } from './unhandled.js';

const ENTITIES = 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename ... on UpdateSession { id files { name } } } }';
const session = (id: unknown) => ({ __typename: 'UpdateSession', id });
const SEEDED = Object.values(SESSION_IDS);
const READY = SESSION_IDS.ready;

let gw: TestGateway;
let unhandled: ReturnType<typeof watchUnhandled>;
beforeAll(async () => {
  gw = await startTestGateway({ simulator: { eventCount: 0 } });
});
afterAll(() => gw.close());
beforeEach(() => {
  unhandled = watchUnhandled();
  gw.sim.control.resetCounters();
});
afterEach(async () => {
  await settleTicks();
  unhandled.stop();
  expect(unhandled.errors).toEqual([]);
});

const codesByIndex = (errors: { path?: (string | number)[]; extensions?: { code?: string } }[] = []) =>
  Object.fromEntries(errors.map((e) => [e.path?.[1], e.extensions?.code]));

describe('_entities representations', () => {
  it('answers an empty id next to an unknown __typename item by item, with nothing left unhandled', async () => {
    const response = await gw.execute(ENTITIES, { r: [session(''), { __typename: 'Nope' }, session(READY)] });
    expect(response.data?._entities).toHaveLength(3);
    expect(response.data?._entities[0]).toBeNull();
    expect(response.data?._entities[1]).toBeNull();
    expect(response.data?._entities[2]).toMatchObject({ __typename: 'UpdateSession', id: READY });
    expect(codesByIndex(response.errors)).toEqual({ 0: 'BAD_USER_INPUT', 1: 'BAD_USER_INPUT' });
  });

  it('answers an unknown id followed by a representation without __typename', async () => {
    const response = await gw.execute(ENTITIES, { r: [session(MISSING_SESSION_ID), { id: 'x' }, 'a string', 42] });
    expect(response.data?._entities).toEqual([null, null, null, null]);
    expect(codesByIndex(response.errors)).toEqual({ 0: 'NOT_FOUND', 1: 'BAD_USER_INPUT', 2: 'BAD_USER_INPUT', 3: 'BAD_USER_INPUT' });
  });

  it('checks every representation before any upstream call', async () => {
    const response = await gw.execute(ENTITIES, { r: [{ __typename: 'Query' }, { __typename: 'UpdateSessionFile', id: 'a' }, session('  ')] });
    expect(response.data?._entities).toEqual([null, null, null]);
    expect(codesByIndex(response.errors)).toEqual({ 0: 'BAD_USER_INPUT', 1: 'BAD_USER_INPUT', 2: 'BAD_USER_INPUT' });
    expect(gw.sim.control.counters().files).toBe(0);
  });

  it('refuses more than 100 representations without calling the upstream', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => session(`session-${i}`));
    const response = await gw.execute(ENTITIES, { r: ids });
    expect(response.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors?.[0]?.message).toBe('At most 100 representations are resolved per request; this one sent 101.');
    expect(gw.sim.control.counters().files).toBe(0);
  });

  it('counts the representations of every _entities field of a request against the 100', async () => {
    const aliased = `query ($r: [_Any!]!) {
      a: _entities(representations: $r) { ... on UpdateSession { id } }
      b: _entities(representations: $r) { ... on UpdateSession { id } }
    }`;
    const response = await gw.execute(aliased, { r: Array.from({ length: 60 }, () => session(READY)) });
    // _entities is a non-null list: the field refused takes the response's data with it.
    expect(response.data).toBeNull();
    expect(response.errors).toEqual([
      expect.objectContaining({
        path: ['b'],
        message: 'At most 100 representations are resolved per request; this one sent 120.',
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }),
      }),
    ]);
  });

  it('resolves 100 representations of distinct sessions', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => session(SEEDED[i % SEEDED.length]!));
    const response = await gw.execute(ENTITIES, { r: ids });
    expect(response.errors).toBeUndefined();
    expect(response.data?._entities).toHaveLength(100);
    expect(gw.sim.control.counters().files).toBe(SEEDED.length);
  });
});

describe('update session ids longer than 1024 characters', () => {
  const long = 'a'.repeat(200 * 1024);

  it.each([
    ['updateSessionFiles', 'query ($id: ID!) { updateSessionFiles(updateSessionId: $id) { name } }'],
    ['updateSession', 'query ($id: ID!) { updateSession(id: $id) { id } }'],
  ])('%s answers BAD_USER_INPUT before any upstream call', async (field, query) => {
    const response = await gw.execute(query, { id: long });
    expect(response.data).toEqual({ [field]: null });
    expect(response.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    expect(response.errors?.[0]?.message).not.toContain(long.slice(0, 100));
    expect(gw.sim.control.counters().files).toBe(0);
  });

  it('an _entities representation likewise, for that item only', async () => {
    const response = await gw.execute(ENTITIES, { r: [session('a'.repeat(1025)), session(READY)] });
    expect(codesByIndex(response.errors)).toEqual({ 0: 'BAD_USER_INPUT' });
    expect(response.data?._entities[1]).toMatchObject({ id: READY });
    expect(gw.sim.control.counters().files).toBe(1);
  });

  it('admits an id of exactly 1024 characters (NOT_FOUND from the upstream)', async () => {
    const response = await gw.execute('query ($id: ID!) { updateSession(id: $id) { id } }', { id: 'b'.repeat(1024) });
    expect(response.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
  });
});
