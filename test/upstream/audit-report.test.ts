/** The audit report: query sent as given, envelope validated, records read row by row. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAuditRows } from '../../src/upstream/identity/audit-row-parsing.js';
import { findLeakedSecrets, fullWindow, startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness;
beforeAll(async () => {
  harness = await startUpstreamHarness();
});
afterAll(async () => {
  expect(findLeakedSecrets(harness)).toEqual([]);
  await harness.close();
});

describe('audit report', { timeout: 10_000 }, () => {
  it('returns the rows the upstream holds, newest first, with typed records', async () => {
    const query = fullWindow(20, 5);
    const expected = harness.sim.control.events(query).slice(5, 25);
    const page = await harness.upstreams.identity!.auditReport(query, harness.call);
    expect(page.rows).toHaveLength(expected.length);
    page.rows.forEach((row, i) => {
      expect(row.ok).toBe(true);
      if (row.ok) {
        expect(row.record.uuid).toBe(expected[i]!.uuid);
        expect(typeof row.record.timestamp).toBe('number');
        expect(row.record.values).toBeTypeOf('object');
      }
    });
  });

  it('passes the objectType filter through', async () => {
    const query = { ...fullWindow(50), objectType: 'LOGIN' };
    const expected = harness.sim.control.events(query).slice(0, 50);
    const page = await harness.upstreams.identity!.auditReport(query, harness.call);
    expect(page.rows.map((r) => (r.ok ? r.record.uuid : null))).toEqual(expected.map((e) => e.uuid));
    expect(page.rows.every((r) => r.ok && r.record.objectType === 'LOGIN')).toBe(true);
  });

  it('keeps a corrupted record in place as {ok:false}, the other rows ok', async () => {
    const query = fullWindow(10);
    const events = harness.sim.control.events(query);
    harness.sim.control.corruptEvent(events[3]!.uuid);

    const page = await harness.upstreams.identity!.auditReport(query, harness.call);
    expect(page.rows).toHaveLength(10);
    const bad = page.rows[3]!;
    expect(bad).toEqual({ ok: false, reason: expect.stringMatching(/not valid JSON/) });
    page.rows.forEach((row, i) => {
      if (i === 3) return;
      expect(row).toMatchObject({ ok: true, record: { uuid: events[i]!.uuid } });
    });
    const warning = harness.memory.lines().find((l) => l.msg?.startsWith('audit rows with unreadable records'));
    expect(warning).toMatchObject({ unreadableRows: 1, positions: [3], requestId: 'req-test' });
  });
});

describe('readAuditRows', () => {
  const good = {
    baseType: 'Action',
    uuid: 'fe09a3c2-0000-4000-8000-000000000001',
    timeStamp: 1561399981109,
    objectType: 'LOGIN',
    sourceIP: '10.0.0.1',
    values: { success: 'true' },
  };
  const row = (record: unknown) => ['1561399981109', 'admin (System Domain)', 'LOGIN (Password)', null, record];

  it('keeps values as the upstream sent them, {} when absent, and refuses values that are no object', () => {
    const { rows, failed } = readAuditRows([
      row(JSON.stringify({ ...good, values: { success: 'false', nested: { a: [1] } } })),
      row(JSON.stringify({ ...good, values: undefined })),
      row(JSON.stringify({ ...good, values: ['not', 'an', 'object'] })),
      row(JSON.stringify({ ...good, values: 'text' })),
      ['1561399981109', 'not a row'],
      'not even an array',
    ]);
    expect(rows[0]).toMatchObject({ ok: true, record: { values: { success: 'false', nested: { a: [1] } } } });
    expect(rows[1]).toMatchObject({ ok: true, record: { values: {} } });
    expect(failed).toEqual([2, 3, 4, 5]);
    expect(rows[5]).toEqual({ ok: false, reason: 'The audit row is not an array.' });
  });

  it('reads each row on its own and names the problem without quoting the record', () => {
    const { rows, failed } = readAuditRows([
      row(JSON.stringify(good)),
      row('{"baseType":"Action", secret-ish garbage'),
      row(JSON.stringify({ ...good, uuid: 42 })),
      row(null),
      row(JSON.stringify(good)),
    ]);
    expect(failed).toEqual([1, 2, 3]);
    expect(rows[0]).toMatchObject({ ok: true, record: { timestamp: 1561399981109, sourceIp: '10.0.0.1' } });
    expect(rows[1]).toEqual({ ok: false, reason: 'The audit record is not valid JSON.' });
    expect(rows[2]).toMatchObject({ ok: false, reason: expect.stringMatching(/^The audit record does not match.*uuid/) });
    expect(rows[3]).toEqual({ ok: false, reason: 'The audit record is missing.' });
    expect(JSON.stringify(rows)).not.toMatch(/garbage/);
    expect(rows[4]!.ok).toBe(true);
  });

  it('leaves out a record whose timestamp no date can hold, naming the field', () => {
    const { rows } = readAuditRows([row(JSON.stringify({ ...good, timestamp: 9e15 })), row(JSON.stringify({ ...good, timestamp: 8.64e15 }))]);
    expect(rows[0]).toEqual({
      ok: false,
      reason: 'The audit record does not match its documented shape (timestamp: Too big: expected number to be <=8640000000000000).',
    });
    expect(rows[1]).toMatchObject({ ok: true, record: { timestamp: 8.64e15 } });
  });

  it('names at most three problems of a record, each with its field, and a record that is no object as such', () => {
    const { rows } = readAuditRows([
      row(JSON.stringify({ baseType: 1, uuid: 2, objectType: 'LOGIN', timestamp: 'x', actorId: 'y' })),
      row('5'),
      row('null'),
    ]);
    expect(rows).toEqual([
      {
        ok: false,
        reason:
          'The audit record does not match its documented shape (baseType: Invalid option: expected one of "Audit"|"Action"; ' +
          'uuid: Invalid input: expected string, received number; timestamp: Invalid input: expected number, received string).',
      },
      { ok: false, reason: 'The audit record does not match its documented shape (Invalid input: expected object, received number).' },
      { ok: false, reason: 'The audit record does not match its documented shape (Invalid input: expected object, received null).' },
    ]);
  });

  it('reads a 5000-row page quickly', () => {
    const text = JSON.stringify(good);
    const data = Array.from({ length: 5000 }, () => row(text));
    const started = performance.now();
    const { rows } = readAuditRows(data);
    expect(rows).toHaveLength(5000);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
