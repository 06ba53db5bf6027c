import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fileInfoSchema,
  fileListSchema,
  sessionLoginSchema,
  type FileInfo,
} from '../../src/upstream/content-library/schemas.js';
import { vapiErrorSchema } from '../helpers/upstream-shapes.js';
import { DEMO_USER, MISSING_SESSION_ID, SESSION_IDS, startSimulator, type Simulator } from '../../simulator/index.js';
import { basic, contentPath, demoSession, filesRequest, http } from '../helpers/simulator-client.js';

let sim: Simulator;
let session: string;

beforeAll(async () => {
  sim = await startSimulator({ eventCount: 0 });
  session = await demoSession(sim);
});
afterAll(() => sim.close());

async function files(id: string): Promise<FileInfo[]> {
  const res = await filesRequest(sim, session, id);
  expect(res.status).toBe(200);
  return readFiles(res.json);
}

/** The list as the gateway reads it: its envelope, then every file by the file model. */
const readFiles = (json: unknown): FileInfo[] => fileListSchema.parse(json).value.map((file) => fileInfoSchema.parse(file));

interface Nested {
  id: string;
  params: { key: string; value: { l?: Nested | null } }[];
}

/** How many `l` levels a message's params nest. */
function lDepth(message: Nested): number {
  const depths = message.params.map((p) => (p.value.l ? 1 + lDepth(p.value.l) : 0));
  return Math.max(0, ...depths);
}

describe('session login', () => {
  it('answers {value} and a cookie of the same value', async () => {
    const res = await http(`${contentPath(sim)}/cis/session`, {
      method: 'POST',
      headers: { authorization: basic(DEMO_USER.username, DEMO_USER.password) },
    });
    expect(res.status).toBe(200);
    const { value } = sessionLoginSchema.parse(res.json);
    expect(res.headers.get('set-cookie')).toContain(`vmware-api-session-id=${value}`);
    // The cookie alone also authenticates.
    const viaCookie = await http(`${contentPath(sim)}/content/library/item/updatesession/file?update_session_id=${SESSION_IDS.empty}`, {
      headers: { cookie: `vmware-api-session-id=${value}` },
    });
    expect(viaCookie.status).toBe(200);
  });

  it.each([
    ['wrong password', { authorization: basic(DEMO_USER.username, 'nope') }],
    ['no credentials', {}],
    ['not Basic', { authorization: 'Bearer x' }],
  ])('answers 401 vAPI unauthenticated for %s', async (_label, headers) => {
    const res = await http(`${contentPath(sim)}/cis/session`, { method: 'POST', headers });
    expect(res.status).toBe(401);
    expect(vapiErrorSchema.parse(res.json).type).toBe('com.vmware.vapi.std.errors.unauthenticated');
    expect(res.json).toMatchObject({ value: { messages: [{ args: [], default_message: expect.any(String), id: expect.any(String) }] } });
  });

  it('logs out with DELETE, after which the session is refused', async () => {
    const id = await demoSession(sim);
    const out = await http(`${contentPath(sim)}/cis/session`, { method: 'DELETE', headers: { 'vmware-api-session-id': id } });
    expect(out.status).toBe(200);
    expect((await filesRequest(sim, id, SESSION_IDS.empty)).status).toBe(401);
  });
});

describe('update session files', () => {
  it('mixed: every status, source type and endpoint kind, sizes only when READY', async () => {
    const list = await files(SESSION_IDS.mixed);
    expect(new Set(list.map((f) => f.status))).toEqual(new Set(['WAITING_FOR_TRANSFER', 'TRANSFERRING', 'READY', 'VALIDATING', 'ERROR']));
    expect(new Set(list.map((f) => f.source_type))).toEqual(new Set(['NONE', 'PUSH', 'PULL']));
    for (const file of list) {
      if (file.status === 'READY') expect(file.size).toEqual(expect.any(Number));
      else expect(file.size).toBeUndefined();
      if (file.source_type === 'PUSH' && file.status === 'WAITING_FOR_TRANSFER') expect(file.upload_endpoint?.uri).toMatch(/^https:/);
      if (file.source_type === 'PULL') expect(file.source_endpoint?.uri).toMatch(/^(https?|ds):/);
      expect(file.error_message !== undefined).toBe(file.status === 'ERROR');
      expect(typeof file.keep_in_storage).toBe('boolean');
      expect(typeof file.bytes_transferred).toBe('number');
    }
    const uris = list.map((f) => f.source_endpoint?.uri ?? '');
    expect(uris.some((u) => u.startsWith('ds:///vmfs/volumes/'))).toBe(true);
    expect(list.some((f) => f.source_endpoint?.ssl_certificate_thumbprint?.match(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/))).toBe(true);
    expect(list.some((f) => (f.size ?? 0) > 2 ** 31)).toBe(true);
    expect(list.some((f) => f.keep_in_storage === true) && list.some((f) => f.keep_in_storage === false)).toBe(true);
    expect(list.some((f) => f.checksum_info && f.checksum_info.algorithm === undefined)).toBe(true);
    expect(list.some((f) => f.checksum_info?.algorithm === 'SHA256')).toBe(true);
    expect(list.some((f) => f.checksum_info === undefined)).toBe(true);
  });

  it('keeps large sizes exact (JSON numbers above 2^31)', async () => {
    const res = await filesRequest(sim, session, SESSION_IDS.ready);
    expect(res.text).toContain('"size":4831838208');
    const list = readFiles(res.json);
    expect(list.map((f) => f.size)).toContain(4_831_838_208);
    expect(list.every((f) => f.status === 'READY')).toBe(true);
  });

  it('error: error_message nests l three levels deep, with every param kind', async () => {
    const [file] = await files(SESSION_IDS.error);
    const message = file?.error_message;
    expect(message).toBeDefined();
    expect(lDepth(message as unknown as Nested)).toBe(3);
    const kinds = new Set(message!.params.flatMap((p) => Object.keys(p.value)));
    for (const kind of ['dt', 's', 'd', 'precision', 'format', 'i', 'l']) expect(kinds).toContain(kind);
    expect(message!.args.length).toBeGreaterThan(0);
  });

  it('empty: value is []', async () => {
    const res = await filesRequest(sim, session, SESSION_IDS.empty);
    expect(res.json).toEqual({ value: [] });
  });

  it('unknownStatus: a status outside the documented list', async () => {
    const list = await files(SESSION_IDS.unknownStatus);
    expect(list.map((f) => f.status)).toContain('PAUSED');
  });

  it('many: 150 files', async () => {
    expect(await files(SESSION_IDS.many)).toHaveLength(150);
  });

  it('lists every seeded session in sessions(), each answering 200', async () => {
    const seeded = sim.control.sessions();
    expect(seeded.map((s) => s.id).sort()).toEqual(Object.values(SESSION_IDS).sort());
    for (const { id, covers } of seeded) {
      expect(covers.length).toBeGreaterThan(0);
      await files(id);
    }
  });

  it('answers 404 vAPI not_found for an unknown session', async () => {
    const res = await filesRequest(sim, session, MISSING_SESSION_ID);
    expect(res.status).toBe(404);
    expect(vapiErrorSchema.parse(res.json).type).toBe('com.vmware.vapi.std.errors.not_found');
    expect(res.json).toMatchObject({ value: { messages: [{ args: [MISSING_SESSION_ID] }] } });
  });

  it('answers 400 invalid_argument without update_session_id', async () => {
    for (const id of [undefined, '']) {
      const res = await filesRequest(sim, session, id);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ type: 'com.vmware.vapi.std.errors.invalid_argument' });
    }
  });

  it('answers 401 without a session, with an unknown one, and checks it before the parameters', async () => {
    for (const id of [undefined, 'deadbeef']) {
      const res = await filesRequest(sim, id, MISSING_SESSION_ID);
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ type: 'com.vmware.vapi.std.errors.unauthenticated' });
    }
    expect((await filesRequest(sim, undefined)).status).toBe(401);
  });
});

describe('vendor segment and users', () => {
  it('serves only the configured vendor, naming it in error types', async () => {
    const acme = await startSimulator({ eventCount: 0, vendor: 'acme' });
    try {
      expect((await http(`${contentPath(acme, 'vmware')}/cis/session`, { method: 'POST' })).status).toBe(404);
      const unauthenticated = await filesRequest(acme, undefined, SESSION_IDS.mixed, 'acme');
      expect(unauthenticated.json).toMatchObject({ type: 'com.acme.vapi.std.errors.unauthenticated' });
      const id = await demoSession(acme, 'acme');
      expect((await filesRequest(acme, id, SESSION_IDS.mixed, 'acme')).status).toBe(200);
      expect((await filesRequest(acme, id, SESSION_IDS.mixed, 'vmware')).status).toBe(404);
    } finally {
      await acme.close();
    }
  });

  it('needs no session when users is null', async () => {
    const open = await startSimulator({ eventCount: 0, users: null });
    try {
      expect((await filesRequest(open, undefined, SESSION_IDS.ready)).status).toBe(200);
      const login = await http(`${contentPath(open)}/cis/session`, { method: 'POST' });
      expect(sessionLoginSchema.safeParse(login.json).success).toBe(true);
    } finally {
      await open.close();
    }
  });
});
