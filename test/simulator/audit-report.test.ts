import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRecordSchema } from '../../src/upstream/identity/schemas.js';
import { auditReportSchema } from '../helpers/upstream-shapes.js';
import { recordTimestamp, startSimulator, type AuditRecordData, type Simulator } from '../../simulator/index.js';
import { FIXED_START, HOUR, auditRequest, demoToken, manualClock, rowUuids, type AuditBody } from '../helpers/simulator-client.js';

const clock = manualClock();
let sim: Simulator;
let token: string;
/** Every seeded event, newest first, as the control object reports them. */
let truth: AuditRecordData[];

beforeAll(async () => {
  // 12k events span three 5000-row pages; seed-data.test.ts covers the 24k default.
  sim = await startSimulator({ now: clock.now, seed: 7, eventCount: 12_000 });
  token = (await demoToken(sim)).access_token;
  truth = sim.control.events();
});
afterAll(() => sim.close());

async function page(params: Record<string, string | number> = {}): Promise<AuditBody> {
  const res = await auditRequest(sim, token, params);
  expect(res.status).toBe(200);
  return res.json as AuditBody;
}

/** Reads every page of a query the way a careful client would: until a short page. */
async function allPages(params: Record<string, string | number>, pageSize: number): Promise<string[]> {
  const uuids: string[] = [];
  for (let startIndex = 0; ; startIndex += pageSize) {
    const body = await page({ ...params, pageSize, startIndex });
    uuids.push(...rowUuids(body));
    if (body.data.length < pageSize) return uuids;
  }
}

describe('audit report shape', () => {
  it('answers the documented envelope, every row parses with the gateway models', async () => {
    const body = await page();
    expect(auditReportSchema.safeParse(body).success).toBe(true);
    expect(body.header).toEqual(['reports.dateAndTime', 'reports.userDomain', 'reports.Event', 'reports.object', '']);
    expect(body.headerArg).toEqual(['', '', '', '', '']);
    expect(Object.keys(body)).toEqual(['header', 'data', '_links', 'headerArg']);
    // One assertion over the page: thousands of `expect` calls cost more than the rows' parsing.
    const mismatches: string[] = [];
    const check = (index: number, what: string, actual: unknown, expected: unknown) => {
      if (actual !== expected) mismatches.push(`row ${index} ${what}: ${JSON.stringify(actual)} instead of ${JSON.stringify(expected)}`);
    };
    body.data.forEach((row, index) => {
      check(index, 'length', row.length, 5);
      const record = auditRecordSchema.parse(JSON.parse(row[4]));
      check(index, 'time', row[0], String(record.timestamp));
      if (record.objectType === 'LOGIN') {
        check(index, 'event', row[2], `LOGIN (${String(record.values['authMethods'])})`);
        check(index, 'object', row[3], null);
      }
      if (record.actorUserName !== null && record.actorDomain !== null) {
        check(index, 'user', row[1], `${record.actorUserName} (${record.actorDomain})`);
      }
      if (record.baseType === 'Audit') check(index, 'event', row[2], `${record.objectType} (${String(record.objectAction)})`);
    });
    expect(body.data.length).toBeGreaterThan(0);
    expect(mismatches).toEqual([]);
  });

  it('defaults to the last 72 hours and a 5000-row page, and echoes them in the self link', async () => {
    const body = await page();
    expect(body.data).toHaveLength(5000);
    const href = new URL(body._links.self.href, 'http://x');
    expect(href.pathname).toBe('/analytics/reports/audit/');
    expect(Object.fromEntries(href.searchParams)).toEqual({
      fromMillis: String(FIXED_START - 72 * HOUR),
      toMillis: String(FIXED_START),
      pageSize: '5000',
      startIndex: '0',
    });
  });

  it('echoes objectType and action in the self link when given', async () => {
    const body = await page({ objectType: 'Group', action: 'Link', fromMillis: 5, toMillis: 9, pageSize: 10 });
    expect(body._links.self.href).toBe(
      '/analytics/reports/audit/?fromMillis=5&toMillis=9&objectType=Group&action=Link&pageSize=10&startIndex=0',
    );
  });

  it('also answers without the trailing slash', async () => {
    const res = await fetch(`${sim.url}/analytics/reports/audit?pageSize=1`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(4000),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as AuditBody).data).toHaveLength(1);
  });
});

describe('ordering and paging', () => {
  it('pages through the whole window newest first, with a total and stable order', async () => {
    const uuids = await allPages({}, 5000);
    expect(uuids).toEqual(truth.map((r) => r.uuid));
    expect(new Set(uuids).size).toBe(uuids.length);
    const stamps = truth.map(recordTimestamp);
    // Newest first; ties broken by uuid, ascending.
    const outOfOrder = truth.filter((cur, i) => {
      const prev = truth[i - 1];
      if (!prev) return false;
      const [a, b] = [stamps[i - 1] as number, stamps[i] as number];
      return a < b || (a === b && !(prev.uuid < cur.uuid));
    });
    expect(outOfOrder).toEqual([]);
    expect(stamps.some((s, i) => i > 0 && s === stamps[i - 1])).toBe(true);
  });

  it('gives the same rows for odd page sizes, the last page shorter', async () => {
    const uuids = await allPages({ objectType: 'LAUNCH' }, 777);
    expect(uuids).toEqual(truth.filter((r) => r.objectType === 'LAUNCH').map((r) => r.uuid));
    expect(uuids.length % 777).not.toBe(0);
  });

  it('answers an empty page past the end', async () => {
    expect((await page({ startIndex: truth.length })).data).toEqual([]);
    expect((await page({ startIndex: truth.length + 10_000 })).data).toEqual([]);
    expect(rowUuids(await page({ startIndex: truth.length - 1 }))).toEqual([truth.at(-1)!.uuid]);
  });

  it('clamps pageSize above 5000 to 5000', async () => {
    const body = await page({ pageSize: 20_000 });
    expect(body.data).toHaveLength(5000);
    expect(body._links.self.href).toContain('pageSize=5000');
  });

  it.each<Record<string, string | number>>([
    { pageSize: 'ten' },
    { pageSize: 0 },
    { pageSize: -5 },
    { startIndex: -1 },
    { startIndex: '1.5' },
    { fromMillis: 'yesterday' },
    { toMillis: '1e12' },
  ])('refuses %o with 400', async (params) => {
    const res = await auditRequest(sim, token, params);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: 'invalid_request' });
  });
});

describe('filters', () => {
  it('treats fromMillis and toMillis as inclusive bounds', async () => {
    const target = truth[1234] as AuditRecordData;
    const ts = recordTimestamp(target);
    const atTs = truth.filter((r) => recordTimestamp(r) === ts).map((r) => r.uuid);
    expect(rowUuids(await page({ fromMillis: ts, toMillis: ts }))).toEqual(atTs);
    expect(rowUuids(await page({ fromMillis: ts + 1, toMillis: ts + 1 }))).not.toContain(target.uuid);
    const window = await page({ fromMillis: ts - HOUR, toMillis: ts });
    const expected = truth.filter((r) => recordTimestamp(r) >= ts - HOUR && recordTimestamp(r) <= ts);
    expect(rowUuids(window)).toEqual(expected.map((r) => r.uuid));
  });

  it('answers nothing when fromMillis is after toMillis', async () => {
    expect((await page({ fromMillis: FIXED_START, toMillis: FIXED_START - HOUR })).data).toEqual([]);
  });

  it('matches objectType exactly and case-sensitively', async () => {
    const logins = await allPages({ objectType: 'LOGIN' }, 2000);
    expect(logins.length).toBeGreaterThan(2000);
    expect(logins).toEqual(truth.filter((r) => r.objectType === 'LOGIN').map((r) => r.uuid));
    expect((await page({ objectType: 'login' })).data).toEqual([]);
    expect((await page({ objectType: 'group' })).data).toEqual([]);
    const dyrectory = rowUuids(await page({ objectType: 'DyrectorySyncProfile' }));
    const directory = rowUuids(await page({ objectType: 'DirectorySyncProfile' }));
    expect(dyrectory.length).toBeGreaterThan(0);
    expect(directory.length).toBeGreaterThan(0);
    expect(dyrectory.filter((u) => directory.includes(u))).toEqual([]);
  });

  it('filters by action on the upper-case objectAction', async () => {
    for (const action of ['Create', 'Update', 'Delete', 'Link', 'Unlink']) {
      const body = await page({ objectType: 'Group', action });
      expect(body.data.length).toBeGreaterThan(0);
      for (const row of body.data) {
        const record = JSON.parse(row[4]) as AuditRecordData;
        expect(record.objectType).toBe('Group');
        expect(record.objectAction).toBe(action.toUpperCase());
      }
      const expected = truth.filter((r) => r.objectType === 'Group' && r.objectAction === action.toUpperCase());
      expect(rowUuids(body)).toEqual(expected.map((r) => r.uuid));
    }
  });

  it('applies action across types, and Action records (no objectAction) never match it', async () => {
    const linked = await allPages({ action: 'Link' }, 5000);
    expect(linked).toEqual(truth.filter((r) => r.objectAction === 'LINK').map((r) => r.uuid));
    expect((await page({ objectType: 'LOGIN', action: 'Create' })).data).toEqual([]);
  });

  it('moves the default window with the clock', async () => {
    clock.advance(24 * HOUR);
    const earlierToken = token;
    try {
      // The earlier token lived about 3 hours; a day later it is long expired.
      expect((await auditRequest(sim, token)).status).toBe(401);
      token = (await demoToken(sim)).access_token;
      const uuids = await allPages({}, 5000);
      const cutoff = FIXED_START - 48 * HOUR;
      expect(uuids).toEqual(truth.filter((r) => recordTimestamp(r) >= cutoff).map((r) => r.uuid));
      expect(uuids.length).toBeLessThan(truth.length);
      // An explicit window still reaches the older events.
      expect((await page({ fromMillis: 0, startIndex: truth.length - 1 })).data).toHaveLength(1);
    } finally {
      clock.set(FIXED_START);
      token = earlierToken;
    }
  });
});

describe('authorization', () => {
  it('answers 401 without a token, with an unknown token and with a Basic header', async () => {
    for (const auth of [undefined, 'not-a-token']) {
      const res = await auditRequest(sim, auth);
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ error: 'invalid_token' });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });
});
