/**
 * Values outside the contract (a newer server's enum values, odd uris, out-of-range numbers)
 * never cost the other files or fields. A stub content library stands in for the simulator,
 * which seeds only documented values apart from the PAUSED status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/lib/config.js';
import { UpstreamError } from '../../src/lib/errors.js';
import { createLogger } from '../../src/lib/logger.js';
import type { FileInfo } from '../../src/upstream/content-library/schemas.js';
import type { Upstreams } from '../../src/upstream/types.js';
import { createGateway, type GatewayYoga } from '../../src/gateway/yoga.js';
import { MemoryLog, type GraphQLResponse } from '../helpers/gateway.js';

const newerServer: FileInfo[] = [
  {
    name: 'from-the-future.ova',
    source_type: 'COPY',
    status: 'READY',
    size: 3_000_000_000,
    checksum_info: { algorithm: 'SHA3_256', checksum: 'abc' },
    source_endpoint: { uri: 'file:///srv/library/from-the-future.ova' },
    upload_endpoint: { uri: 'cls/data/no-scheme' },
    error_message: {
      id: 'm',
      default_message: 'text',
      args: [],
      params: [{ key: 'odd', value: { s: 'kept', dt: 'not a date', precision: 2 ** 40, i: 2 ** 60 } }],
    },
  },
  {
    name: 'ordinary.iso',
    source_type: 'PUSH',
    status: 'WAITING_FOR_TRANSFER',
    checksum_info: { algorithm: 'sha-256', checksum: 'def' },
    upload_endpoint: { uri: 'https://vc.example.com/cls/data/ordinary.iso' },
    bytes_transferred: 0,
  },
];

const QUERY = /* GraphQL */ `
  query ($id: ID!) {
    updateSession(id: $id) {
      id
      files {
        name
        sourceType
        upstreamSourceType
        status
        size
        checksumInfo { algorithm checksum }
        sourceEndpoint { scheme }
        uploadEndpoint { scheme }
        errorMessage { params { key value { s dt precision i } } }
      }
    }
  }
`;

let yoga: GatewayYoga;
let memory: MemoryLog;
let calls = 0;

beforeAll(() => {
  const upstreams: Upstreams = {
    identity: undefined,
    contentLibrary: {
      async listUpdateSessionFiles(id) {
        calls += 1;
        if (id === 'newer') return newerServer.map((file) => ({ ok: true, file }));
        if (id === 'down') throw new UpstreamError('UPSTREAM_UNAVAILABLE', 'content-library', 'unavailable');
        throw new UpstreamError('NOT_FOUND', 'content-library', 'The update session does not exist.');
      },
    },
    close: async () => {},
  };
  memory = new MemoryLog();
  const config = loadConfig({ GATEWAY_ALLOW_ANONYMOUS: 'true', LOG_LEVEL: 'debug' });
  yoga = createGateway({ config, upstreams, log: createLogger({ level: 'debug', destination: memory }) });
});
afterAll(() => {
  memory.destroy();
});

async function execute(query: string, variables: Record<string, unknown>): Promise<GraphQLResponse> {
  const response = await yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as GraphQLResponse;
}

describe('values a newer content library may send', () => {
  it('keeps every file and reports each unrepresentable value on its own field', async () => {
    const { data, errors } = await execute(QUERY, { id: 'newer' });
    expect(data?.updateSession.files).toEqual([
      {
        name: 'from-the-future.ova',
        // Non-null in the contract: an error would null the file and, through [UpdateSessionFile!]!,
        // the session. It reads NONE; upstreamSourceType keeps the value.
        sourceType: 'NONE',
        upstreamSourceType: 'COPY',
        status: 'READY',
        size: 3_000_000_000,
        checksumInfo: null,
        sourceEndpoint: { scheme: 'file' },
        uploadEndpoint: null,
        errorMessage: { params: [{ key: 'odd', value: { s: 'kept', dt: null, precision: null, i: null } }] },
      },
      {
        name: 'ordinary.iso',
        sourceType: 'PUSH',
        upstreamSourceType: 'PUSH',
        status: 'WAITING_FOR_TRANSFER',
        size: null,
        checksumInfo: { algorithm: 'SHA256', checksum: 'def' },
        sourceEndpoint: null,
        uploadEndpoint: { scheme: 'https' },
        errorMessage: null,
      },
    ]);
    const file = ['updateSession', 'files', 0];
    expect(errors?.map((e) => [e.path, e.extensions?.code])).toEqual(
      expect.arrayContaining([
        [[...file, 'checksumInfo', 'algorithm'], 'UPSTREAM_INVALID_RESPONSE'],
        [[...file, 'uploadEndpoint', 'scheme'], 'UPSTREAM_INVALID_RESPONSE'],
        [[...file, 'errorMessage', 'params', 0, 'value', 'dt'], 'UPSTREAM_INVALID_RESPONSE'],
        [[...file, 'errorMessage', 'params', 0, 'value', 'precision'], 'UPSTREAM_INVALID_RESPONSE'],
        [[...file, 'errorMessage', 'params', 0, 'value', 'i'], 'UPSTREAM_INVALID_RESPONSE'],
      ]),
    );
    expect(errors).toHaveLength(5);
    // The upstream's values stay out of client messages; the log has them.
    expect(JSON.stringify(errors)).not.toMatch(/SHA3_256|no-scheme|not a date/);
    const warning = memory.lines().find((line) => String(line.msg).includes('source_type'));
    expect(warning).toMatchObject({ level: 40, sourceType: 'COPY', file: 'from-the-future.ova' });
    expect(memory.text()).toContain('SHA3_256');
  });

  it('passes upstream failures through with their code', async () => {
    const result = await execute(`{ updateSessionFiles(updateSessionId: "down") { name } }`, {});
    expect(result.data).toEqual({ updateSessionFiles: null });
    expect(result.errors?.[0]).toMatchObject({ path: ['updateSessionFiles'], extensions: { code: 'UPSTREAM_UNAVAILABLE' } });
  });

  it('counts one call per distinct id in one request', async () => {
    calls = 0;
    await execute(`{ a: updateSession(id: "newer") { id } b: updateSessionFiles(updateSessionId: "newer") { name } c: updateSession(id: "gone") { id } }`, {});
    expect(calls).toBe(2);
  });
});
