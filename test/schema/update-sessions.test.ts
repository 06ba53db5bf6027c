/**
 * updateSessionFiles / updateSession against the simulator over real HTTP: the mapping of every
 * field, errors, and one upstream call per distinct session within a request.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  MISSING_SESSION_ID,
  SESSION_IDS,
  UPDATE_SESSIONS,
  type SimulatedFileInfo,
  type SimulatedMessage,
  type SimulatedParamValue,
} from '../../simulator/content-library-data.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FILE_FIELDS = /* GraphQL */ `
  name
  sourceType
  upstreamSourceType
  size
  bytesTransferred
  keepInStorage
  status
  checksumInfo { algorithm checksum }
  sourceEndpoint { uri scheme sslCertificateThumbprint }
  uploadEndpoint { uri scheme sslCertificateThumbprint }
`;

const PARAM = 'key value { dt s d precision format i }';
const MESSAGE = /* GraphQL */ `
  errorMessage {
    id defaultMessage localized args
    params { ${PARAM} value { l { id params { ${PARAM} value { l { id params { ${PARAM} value { l { id params { ${PARAM} } } } } } } } } } }
  }
`;

const FILES_QUERY = `query ($id: ID!) { updateSessionFiles(updateSessionId: $id) { ${FILE_FIELDS} ${MESSAGE} } }`;

function seeded(id: string): readonly SimulatedFileInfo[] {
  const session = UPDATE_SESSIONS.find((s) => s.id === id);
  if (!session) throw new Error(`no seeded session ${id}`);
  return session.files;
}

const schemeOf = (uri: string) => uri.slice(0, uri.indexOf(':'));
const endpoint = (e: SimulatedFileInfo['source_endpoint']) =>
  e ? { uri: e.uri, scheme: schemeOf(e.uri), sslCertificateThumbprint: e.ssl_certificate_thumbprint ?? null } : null;

/** What the contract promises for one seeded file (errorMessage checked on its own). */
function expectedFile(file: SimulatedFileInfo) {
  return {
    name: file.name,
    sourceType: file.source_type,
    upstreamSourceType: file.source_type,
    size: file.size ?? null,
    bytesTransferred: file.bytes_transferred,
    keepInStorage: file.keep_in_storage,
    status: file.status,
    checksumInfo: file.checksum_info
      ? { algorithm: file.checksum_info.algorithm ?? 'SHA1', checksum: file.checksum_info.checksum }
      : null,
    sourceEndpoint: endpoint(file.source_endpoint),
    uploadEndpoint: endpoint(file.upload_endpoint),
  };
}

/** The message as the selection above reads it: three `l` levels, the innermost without `l`. */
function expectedMessage(message: SimulatedMessage) {
  const value = (v: SimulatedParamValue) => ({
    dt: v.dt ? new Date(v.dt).toISOString() : null,
    s: v.s ?? null,
    d: v.d ?? null,
    precision: v.precision ?? null,
    format: v.format ?? null,
    i: v.i ?? null,
  });
  const params = (list: SimulatedMessage['params'], depth: number): unknown[] =>
    list.map((p) => ({
      key: p.key,
      value:
        depth < 3
          ? { ...value(p.value), l: p.value.l ? { id: p.value.l.id, params: params(p.value.l.params, depth + 1) } : null }
          : value(p.value),
    }));
  return {
    id: message.id,
    defaultMessage: message.default_message,
    localized: message.localized ?? null,
    args: message.args,
    params: params(message.params, 0),
  };
}

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(() => {
  gw.sim.control.resetCounters();
});

describe('updateSessionFiles: field mapping', { timeout: 10_000 }, () => {
  it('maps every field of every file of the mixed session', async () => {
    const { data, errors } = await gw.execute(FILES_QUERY, { id: SESSION_IDS.mixed });
    expect(errors).toBeUndefined();
    const files = seeded(SESSION_IDS.mixed);
    expect(data.updateSessionFiles.map(({ errorMessage: _, ...rest }: Record<string, unknown>) => rest)).toEqual(
      files.map(expectedFile),
    );
    // The seed covers what the contract names: every status, every source type, every scheme.
    expect(new Set(data.updateSessionFiles.map((f: any) => f.status))).toEqual(
      new Set(['WAITING_FOR_TRANSFER', 'TRANSFERRING', 'READY', 'VALIDATING', 'ERROR']),
    );
    expect(new Set(data.updateSessionFiles.map((f: any) => f.sourceType))).toEqual(new Set(['NONE', 'PUSH', 'PULL']));
  });

  it('keeps sizes above 2^31 exact, reads ds:// endpoints and defaults the checksum algorithm to SHA1', async () => {
    const { data, errors } = await gw.execute(FILES_QUERY, { id: SESSION_IDS.ready });
    expect(errors).toBeUndefined();
    const byName = Object.fromEntries(data.updateSessionFiles.map((f: any) => [f.name, f]));
    expect(byName['vcsa-8.0.2.ova']).toMatchObject({ size: 10_737_418_240, bytesTransferred: 10_737_418_240 });
    expect(byName['vcsa-8.0.2.ova'].checksumInfo.algorithm).toBe('SHA512');
    expect(byName['windows-server-2022.iso']).toMatchObject({
      size: 4_831_838_208,
      checksumInfo: { algorithm: 'SHA1' },
      sourceEndpoint: { scheme: 'ds', sslCertificateThumbprint: null },
    });
    expect(byName['windows-server-2022.iso'].sourceEndpoint.uri).toMatch(/^ds:\/\/\/vmfs\/volumes\//);
    expect(byName['descriptor.ovf']).toMatchObject({ sourceType: 'NONE', checksumInfo: null, sourceEndpoint: null });
  });

  it('carries the thumbprint of an https source', async () => {
    const { data } = await gw.execute(FILES_QUERY, { id: SESSION_IDS.mixed });
    const pulling = data.updateSessionFiles.find((f: any) => f.status === 'TRANSFERRING');
    expect(pulling.sourceEndpoint.scheme).toBe('https');
    expect(pulling.sourceEndpoint.sslCertificateThumbprint).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
  });

  it('reads an errorMessage nested three l levels deep, every param kind included', async () => {
    const { data, errors } = await gw.execute(FILES_QUERY, { id: SESSION_IDS.error });
    expect(errors).toBeUndefined();
    const [file] = seeded(SESSION_IDS.error);
    expect(data.updateSessionFiles).toHaveLength(1);
    expect(data.updateSessionFiles[0].errorMessage).toEqual(expectedMessage(file!.error_message!));
    const third = data.updateSessionFiles[0].errorMessage.params[4].value.l.params[1].value.l.params[1].value.l;
    expect(third).toEqual({
      id: 'com.vmware.vdcs.net.connection_refused',
      params: [
        { key: 'port', value: { dt: null, s: null, d: null, precision: null, format: null, i: 80 } },
        { key: 'at', value: { dt: '2024-03-05T14:22:30.512Z', s: null, d: null, precision: null, format: null, i: null } },
      ],
    });
  });
});

describe('updateSessionFiles / updateSession: errors', { timeout: 10_000 }, () => {
  it('answers null with NOT_FOUND for an unknown session, on both fields', async () => {
    const result = await gw.execute(
      `query ($id: ID!) { files: updateSessionFiles(updateSessionId: $id) { name } session: updateSession(id: $id) { id files { name } } }`,
      { id: MISSING_SESSION_ID },
    );
    expect(result.data).toEqual({ files: null, session: null });
    expect(result.errors?.map((e) => [e.path, e.extensions?.code]).sort()).toEqual([
      [['files'], 'NOT_FOUND'],
      [['session'], 'NOT_FOUND'],
    ]);
    expect(gw.sim.control.counters().files).toBe(1);
    expect(JSON.stringify(result.errors)).not.toMatch(/http:|\/rest\//);
  });

  it('answers [] for an empty session', async () => {
    const { data, errors } = await gw.execute(
      `query ($id: ID!) { updateSessionFiles(updateSessionId: $id) { name } updateSession(id: $id) { id files { name } } }`,
      { id: SESSION_IDS.empty },
    );
    expect(errors).toBeUndefined();
    expect(data).toEqual({ updateSessionFiles: [], updateSession: { id: SESSION_IDS.empty, files: [] } });
  });

  it.each(['', '   ', '\t\n'])('refuses the id %j with BAD_USER_INPUT and calls no upstream', async (id) => {
    const result = await gw.execute(
      `query ($id: ID!) { updateSessionFiles(updateSessionId: $id) { name } updateSession(id: $id) { id } }`,
      { id },
    );
    expect(result.data).toEqual({ updateSessionFiles: null, updateSession: null });
    expect(result.errors?.map((e) => e.extensions?.code)).toEqual(['BAD_USER_INPUT', 'BAD_USER_INPUT']);
    expect(gw.sim.control.counters().files).toBe(0);
  });

  it('reports an unknown status as null with UPSTREAM_INVALID_RESPONSE on that field, other files intact', async () => {
    const { data, errors } = await gw.execute(FILES_QUERY, { id: SESSION_IDS.unknownStatus });
    const [paused, ready] = seeded(SESSION_IDS.unknownStatus);
    expect(data.updateSessionFiles).toHaveLength(2);
    expect(data.updateSessionFiles[0]).toMatchObject({ ...expectedFile(paused!), status: null });
    expect(data.updateSessionFiles[1]).toMatchObject(expectedFile(ready!));
    expect(errors).toHaveLength(1);
    expect(errors![0]).toMatchObject({
      path: ['updateSessionFiles', 0, 'status'],
      extensions: { code: 'UPSTREAM_INVALID_RESPONSE' },
    });
    expect(errors![0]!.message).not.toContain('PAUSED');
  });
});

describe('one upstream call per distinct session and request', { timeout: 10_000 }, () => {
  it('serves ten aliases of one session with one call', async () => {
    const aliases = Array.from(
      { length: 10 },
      (_, i) => (i % 2 ? `a${i}: updateSessionFiles(updateSessionId: $id) { name size }` : `a${i}: updateSession(id: $id) { id files { name } }`),
    ).join('\n');
    const { data, errors } = await gw.execute(`query ($id: ID!) { ${aliases} }`, { id: SESSION_IDS.mixed });
    expect(errors).toBeUndefined();
    expect(Object.keys(data)).toHaveLength(10);
    expect(gw.sim.control.counters().files).toBe(1);
  });

  it('serves several _entities representations of one id with one call', async () => {
    const { data, errors } = await gw.execute(
      `query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on UpdateSession { id files { name } } } }`,
      {
        representations: [
          { __typename: 'UpdateSession', id: SESSION_IDS.ready },
          { __typename: 'UpdateSession', id: SESSION_IDS.ready },
          { __typename: 'UpdateSession', id: SESSION_IDS.ready },
          { __typename: 'UpdateSession', id: SESSION_IDS.empty },
          { __typename: 'UpdateSession', id: SESSION_IDS.ready },
        ],
      },
    );
    expect(errors).toBeUndefined();
    expect(data._entities.map((e: any) => e.id)).toEqual([
      SESSION_IDS.ready,
      SESSION_IDS.ready,
      SESSION_IDS.ready,
      SESSION_IDS.empty,
      SESSION_IDS.ready,
    ]);
    expect(data._entities[0].files.map((f: any) => f.name)).toEqual(seeded(SESSION_IDS.ready).map((f) => f.name));
    expect(gw.sim.control.counters().files).toBe(2);
  });

  it('resolves an unknown or empty entity reference to null with its own error, the others intact', async () => {
    const { data, errors } = await gw.execute(
      `query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on UpdateSession { id } } }`,
      {
        representations: [
          { __typename: 'UpdateSession', id: MISSING_SESSION_ID },
          { __typename: 'UpdateSession', id: SESSION_IDS.empty },
          { __typename: 'UpdateSession', id: ' ' },
        ],
      },
    );
    expect(data._entities).toEqual([null, { id: SESSION_IDS.empty }, null]);
    expect(errors?.map((e) => [e.path, e.extensions?.code])).toEqual(
      expect.arrayContaining([
        [['_entities', 0], 'NOT_FOUND'],
        [['_entities', 2], 'BAD_USER_INPUT'],
      ]),
    );
    expect(errors).toHaveLength(2);
  });

  it('fetches every distinct session of one request once', async () => {
    const ids = Object.values(SESSION_IDS);
    const query = `{ ${ids.map((id, i) => `s${i}: updateSessionFiles(updateSessionId: "${id}") { name } t${i}: updateSession(id: "${id}") { id }`).join(' ')} }`;
    const { data, errors } = await gw.execute(query);
    expect(errors?.map((e) => e.path)).toBeUndefined();
    expect(data[`s${ids.indexOf(SESSION_IDS.many)}`]).toHaveLength(150);
    expect(gw.sim.control.counters().files).toBe(ids.length);
  });
});
