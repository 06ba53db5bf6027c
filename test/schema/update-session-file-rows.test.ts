/**
 * One file the gateway cannot read never costs the other files of its list. The scripted content
 * library answers [good, bad, good] over HTTP; the gateway answers the two good files with every
 * field, and the bad one either with the one member it cannot represent as null (the values of
 * docs/update-sessions.md) or left out, with one UPSTREAM_INVALID_RESPONSE entry at its position.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type GraphQLResponse, type TestGateway } from '../helpers/gateway.js';
import { scriptedEnv, startScriptedUpstream, type ScriptedRequest, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const VALUE = 'dt s d precision format i';
const FILE = /* GraphQL */ `
  fragment File on UpdateSessionFile {
    name sourceType upstreamSourceType status size bytesTransferred keepInStorage
    checksumInfo { algorithm checksum }
    sourceEndpoint { uri scheme sslCertificateThumbprint }
    uploadEndpoint { uri scheme sslCertificateThumbprint }
    errorMessage {
      id defaultMessage localized args
      params { key value { ${VALUE} l { id params { key value { ${VALUE} l { id params { key value { ${VALUE} l { id } } } } } } } } }
    }
  }
`;
/** Both Query fields of one session: one upstream call, a list at two paths. */
const BOTH_FIELDS = /* GraphQL */ `
  query ($id: ID!) {
    updateSessionFiles(updateSessionId: $id) { ...File }
    updateSession(id: $id) { id files { ...File } }
  }
  ${FILE}
`;
const ENTITIES = /* GraphQL */ `
  query ($r: [_Any!]!) { _entities(representations: $r) { ... on UpdateSession { id files { ...File } } } }
  ${FILE}
`;

// ---- what the upstream sends --------------------------------------------------------------------

const first = {
  name: 'first.ova',
  source_type: 'PULL',
  status: 'ERROR',
  size: 4_831_838_208,
  bytes_transferred: 4_831_838_208,
  keep_in_storage: true,
  checksum_info: { algorithm: 'SHA256', checksum: 'aa11' },
  source_endpoint: { uri: 'https://files.example.com/first.ova', ssl_certificate_thumbprint: '12:AB' },
  upload_endpoint: { uri: 'ds:///vmfs/volumes/ds1/first.ova' },
  error_message: {
    id: 'com.example.transfer.failed',
    default_message: 'Transfer failed at {when}.',
    localized: 'Übertragung fehlgeschlagen.',
    args: ['first.ova'],
    params: [
      { key: 'when', value: { dt: '2026-11-21T10:15:30+02:00', format: 'SHORT_DATE' } },
      { key: 'ratio', value: { d: 0.25, precision: 2 } },
      { key: 'count', value: { i: 2 ** 40, s: 'many' } },
      {
        key: 'cause',
        value: {
          l: {
            id: 'one',
            params: [{ key: 'k1', value: { l: { id: 'two', params: [{ key: 'k2', value: { l: { id: 'three', params: [] } } }] } } }],
          },
        },
      },
    ],
  },
};

const third = {
  name: 'third.iso',
  source_type: 'PUSH',
  status: 'WAITING_FOR_TRANSFER',
  bytes_transferred: 0,
  keep_in_storage: false,
  checksum_info: { checksum: 'bb22' },
  upload_endpoint: { uri: 'https://vc.example.com/cls/data/third.iso' },
};

/** The file that goes bad: valid as it stands. */
const second = {
  name: 'second.vmdk',
  source_type: 'PUSH',
  status: 'TRANSFERRING',
  bytes_transferred: 10,
  source_endpoint: { uri: 'http://10.0.0.1/second.vmdk' },
  error_message: { id: 'm', default_message: 'text', args: [], params: [{ key: 'p', value: { s: 'kept', d: 1.5 } }] },
};

/** The list's body, the middle file given as JSON text (JSON.stringify cannot write 1e400). */
const listBody = (middle: string) => `{"value":[${JSON.stringify(first)},${middle},${JSON.stringify(third)}]}`;

const secondWith = (changes: Record<string, unknown>) => JSON.stringify({ ...second, ...changes });
const secondWithout = (field: keyof typeof second) => JSON.stringify({ ...second, [field]: undefined });
/** The second file with its one param's value given as JSON text. */
const secondWithParamValue = (valueText: string) =>
  JSON.stringify({ ...second, error_message: { ...second.error_message, params: [{ key: 'p', value: '<value>' }] } }).replace(
    '"<value>"',
    valueText,
  );

/** A param value whose `l` messages nest `levels` deep. */
function nestedParamValue(levels: number): string {
  return `${'{"l":{"id":"n","params":[{"key":"k","value":'.repeat(levels)}{"s":"x"}${'}]}}'.repeat(levels)}`;
}

// ---- what the gateway answers -------------------------------------------------------------------

const value = (v: Record<string, unknown>) => ({ dt: null, s: null, d: null, precision: null, format: null, i: null, ...v });

const firstAnswer = {
  name: 'first.ova',
  sourceType: 'PULL',
  upstreamSourceType: 'PULL',
  status: 'ERROR',
  size: 4_831_838_208,
  bytesTransferred: 4_831_838_208,
  keepInStorage: true,
  checksumInfo: { algorithm: 'SHA256', checksum: 'aa11' },
  sourceEndpoint: { uri: 'https://files.example.com/first.ova', scheme: 'https', sslCertificateThumbprint: '12:AB' },
  uploadEndpoint: { uri: 'ds:///vmfs/volumes/ds1/first.ova', scheme: 'ds', sslCertificateThumbprint: null },
  errorMessage: {
    id: 'com.example.transfer.failed',
    defaultMessage: 'Transfer failed at {when}.',
    localized: 'Übertragung fehlgeschlagen.',
    args: ['first.ova'],
    params: [
      { key: 'when', value: value({ dt: '2026-11-21T08:15:30.000Z', format: 'SHORT_DATE', l: null }) },
      { key: 'ratio', value: value({ d: 0.25, precision: 2, l: null }) },
      { key: 'count', value: value({ i: 2 ** 40, s: 'many', l: null }) },
      {
        key: 'cause',
        value: value({
          l: {
            id: 'one',
            params: [{ key: 'k1', value: value({ l: { id: 'two', params: [{ key: 'k2', value: value({ l: { id: 'three' } }) }] } }) }],
          },
        }),
      },
    ],
  },
};

const thirdAnswer = {
  name: 'third.iso',
  sourceType: 'PUSH',
  upstreamSourceType: 'PUSH',
  status: 'WAITING_FOR_TRANSFER',
  size: null,
  bytesTransferred: 0,
  keepInStorage: false,
  checksumInfo: { algorithm: 'SHA1', checksum: 'bb22' },
  sourceEndpoint: null,
  uploadEndpoint: { uri: 'https://vc.example.com/cls/data/third.iso', scheme: 'https', sslCertificateThumbprint: null },
  errorMessage: null,
};

const secondAnswer = {
  name: 'second.vmdk',
  sourceType: 'PUSH',
  upstreamSourceType: 'PUSH',
  status: 'TRANSFERRING',
  size: null,
  bytesTransferred: 10,
  keepInStorage: null,
  checksumInfo: null,
  sourceEndpoint: { uri: 'http://10.0.0.1/second.vmdk', scheme: 'http', sslCertificateThumbprint: null },
  uploadEndpoint: null,
  errorMessage: {
    id: 'm',
    defaultMessage: 'text',
    localized: null,
    args: [],
    params: [{ key: 'p', value: value({ s: 'kept', d: 1.5, l: null }) }],
  },
};

const LEFT_OUT = "The update session file at position 1 of the upstream's list could not be read; it is left out.";
const LOGGED = 'update session files that do not match their documented shape';
const errorList = (response: GraphQLResponse) => response.errors?.map((e) => ({ path: e.path, code: e.extensions?.code }));

let upstream: ScriptedUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startScriptedUpstream();
  gw = await startTestGateway({ simulator: { eventCount: 0 }, env: scriptedEnv(upstream) });
});
afterAll(async () => {
  await gw.close();
  await upstream.close();
});
beforeEach(() => upstream.clear());

async function answerBoth(middle: string): Promise<GraphQLResponse> {
  upstream.answerNext('files', { body: listBody(middle) });
  const response = await gw.execute(BOTH_FIELDS, { id: 'session-1' });
  expect(upstream.requests('files')).toHaveLength(1);
  return response;
}

describe('a file that does not match the model', () => {
  it.each([
    ['a param d beyond the double range (1e400, Infinity once parsed)', secondWithParamValue('{"d":1e400}')],
    ['a param d sent as a string', secondWithParamValue('{"d":"1.5"}')],
    ['a param i beyond the double range', secondWithParamValue('{"i":1e400}')],
    ['a status that is a number', secondWith({ status: 7 })],
    ['a size of 2^60', secondWith({ size: 2 ** 60 })],
    ['a negative size', secondWith({ size: -1 })],
    ['a fractional size', secondWith({ size: 1.5 })],
    ['a size string beyond 2^53', secondWith({ size: '99999999999999999999' })],
    ['a negative bytes_transferred', secondWith({ bytes_transferred: -5 })],
    ['keep_in_storage as a string', secondWith({ keep_in_storage: 'true' })],
    ['a name that is a number', secondWith({ name: 5 })],
    ['no name', secondWithout('name')],
    ['no source_type', secondWithout('source_type')],
    ['checksum_info without checksum', secondWith({ checksum_info: { algorithm: 'MD5' } })],
    ['an error_message without id', secondWith({ error_message: { default_message: 'text' } })],
    ['args holding a number and a null', secondWith({ error_message: { ...second.error_message, args: [1, null] } })],
    ['params nested 1000 levels deep', secondWithParamValue(nestedParamValue(1000))],
    ['params nested 50,000 levels deep', secondWithParamValue(nestedParamValue(50_000))],
    ['a file that is no object', 'null'],
  ])('(%s) is left out with one error naming its position; the others keep every field', async (_case, middle) => {
    const response = await answerBoth(middle);
    expect(response.data).toEqual({
      updateSessionFiles: [firstAnswer, thirdAnswer],
      updateSession: { id: 'session-1', files: [firstAnswer, thirdAnswer] },
    });
    expect(errorList(response)).toEqual([
      { path: ['updateSessionFiles'], code: 'UPSTREAM_INVALID_RESPONSE' },
      { path: ['updateSession', 'files'], code: 'UPSTREAM_INVALID_RESPONSE' },
    ]);
    expect(response.errors?.map((e) => e.message)).toEqual([LEFT_OUT, LEFT_OUT]);
  });

  it('is logged once per answer with the problem, never its values', async () => {
    const before = gw.logs().length;
    await answerBoth(secondWith({ size: '99999999999999999999', keep_in_storage: 'secret-ish' }));
    const lines = gw.logs().slice(before).filter((line) => line.msg === LOGGED);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      code: 'UPSTREAM_INVALID_RESPONSE',
      upstream: 'content-library',
      unreadable: 1,
      files: [
        {
          position: 1,
          problem: 'does not match its schema',
          issues: expect.arrayContaining([
            expect.objectContaining({ path: 'size', code: 'too_big' }),
            expect.objectContaining({ path: 'keep_in_storage', code: 'invalid_type' }),
          ]),
        },
      ],
    });
    expect(gw.logText()).not.toMatch(/99999999999999999999|secret-ish/);
  });

  it('nested too deep is logged as such, without walking its depth', async () => {
    const before = gw.logs().length;
    await answerBoth(secondWithParamValue(nestedParamValue(1000)));
    const line = gw.logs().slice(before).find((l) => l.msg === LOGGED);
    expect(line).toMatchObject({ files: [{ position: 1, problem: 'nested deeper than 64 levels' }] });
  });

  it('caps the error entries of one list at 50, then sums up the rest at the list', async () => {
    const bad = secondWith({ status: 7 });
    upstream.answerNext('files', { body: listBody(Array.from({ length: 120 }, () => bad).join(',')) });
    const response = await gw.execute('query ($id: ID!) { updateSessionFiles(updateSessionId: $id) { name } }', { id: 'many-bad' });
    expect(response.data).toEqual({ updateSessionFiles: [{ name: 'first.ova' }, { name: 'third.iso' }] });
    const errors = response.errors ?? [];
    expect(errors).toHaveLength(51);
    expect(errors.slice(0, 50).map((e) => [e.path, e.message])).toEqual(
      Array.from({ length: 50 }, (_, i) => [
        ['updateSessionFiles'],
        `The update session file at position ${i + 1} of the upstream's list could not be read; it is left out.`,
      ]),
    );
    expect(errors[50]).toMatchObject({
      path: ['updateSessionFiles'],
      message: "70 more update session files (positions 51 to 120 of the upstream's list) could not be read; they are left out.",
      extensions: { code: 'UPSTREAM_INVALID_RESPONSE' },
    });
  });
});

describe('a member the schema layer reports on its own field', () => {
  const param = ['errorMessage', 'params', 0, 'value'];
  it.each([
    ['a param i of 2^60', secondWithParamValue('{"s":"kept","d":1.5,"i":1152921504606846976}'), [...param, 'i']],
    ['a param i of 1.5', secondWithParamValue('{"s":"kept","d":1.5,"i":1.5}'), [...param, 'i']],
    ['a param precision of 2^60', secondWithParamValue('{"s":"kept","d":1.5,"precision":1152921504606846976}'), [...param, 'precision']],
    ['a param precision of 1.5', secondWithParamValue('{"s":"kept","d":1.5,"precision":1.5}'), [...param, 'precision']],
  ])('(%s) is null with its error; the file stays', async (_case, middle, path) => {
    const response = await answerBoth(middle);
    expect(response.data?.updateSessionFiles).toEqual([firstAnswer, secondAnswer, thirdAnswer]);
    expect(response.data?.updateSession.files).toEqual([firstAnswer, secondAnswer, thirdAnswer]);
    expect(errorList(response)).toEqual([
      { path: ['updateSessionFiles', 1, ...path], code: 'UPSTREAM_INVALID_RESPONSE' },
      { path: ['updateSession', 'files', 1, ...path], code: 'UPSTREAM_INVALID_RESPONSE' },
    ]);
  });

  it('(an empty endpoint uri, which has no scheme) nulls that endpoint with its error; the file stays', async () => {
    const response = await answerBoth(secondWith({ source_endpoint: { uri: '' } }));
    const kept = { ...secondAnswer, sourceEndpoint: null };
    expect(response.data?.updateSessionFiles).toEqual([firstAnswer, kept, thirdAnswer]);
    expect(errorList(response)).toEqual([
      { path: ['updateSessionFiles', 1, 'sourceEndpoint', 'scheme'], code: 'UPSTREAM_INVALID_RESPONSE' },
      { path: ['updateSession', 'files', 1, 'sourceEndpoint', 'scheme'], code: 'UPSTREAM_INVALID_RESPONSE' },
    ]);
  });
});

describe('_entities', () => {
  it('leaves a bad file out of its own representation only, with its error at that representation', async () => {
    const sessionOf = (request: ScriptedRequest) => new URL(request.url, 'http://upstream.test').searchParams.get('update_session_id');
    const answer = (request: ScriptedRequest) =>
      sessionOf(request) === 'broken' ? listBody(secondWith({ size: -1 })) : listBody(JSON.stringify(second));
    upstream.answerNext('files', { body: answer }, { body: answer });
    const representation = (id: string) => ({ __typename: 'UpdateSession', id });
    const response = await gw.execute(ENTITIES, { r: [representation('broken'), representation('fine'), representation('broken')] });
    expect(response.data?._entities).toEqual([
      { id: 'broken', files: [firstAnswer, thirdAnswer] },
      { id: 'fine', files: [firstAnswer, secondAnswer, thirdAnswer] },
      { id: 'broken', files: [firstAnswer, thirdAnswer] },
    ]);
    expect(errorList(response)).toEqual([
      { path: ['_entities', 0, 'files'], code: 'UPSTREAM_INVALID_RESPONSE' },
      { path: ['_entities', 2, 'files'], code: 'UPSTREAM_INVALID_RESPONSE' },
    ]);
    expect(upstream.requests('files')).toHaveLength(2);
  });
});
