/** The size and depth limits on one audit record: at the limit it is read, past it the row is unreadable. */
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_DEPTH, MAX_RECORD_JSON_BYTES, readAuditRows } from '../../src/upstream/identity/audit-row-parsing.js';

const good = {
  baseType: 'Action',
  uuid: 'fe09a3c2-0000-4000-8000-000000000001',
  timeStamp: 1561399981109,
  objectType: 'LOGIN',
  values: { success: 'true', note: '' },
};
const row = (record: string) => ['1561399981109', 'admin (System Domain)', 'LOGIN (Password)', null, record];

/** A valid record of exactly `bytes` UTF-8 bytes, its note written in `char` as far as it fits. */
function recordOfBytes(bytes: number, char: string): string {
  const room = bytes - Buffer.byteLength(JSON.stringify(good));
  const count = Math.floor(room / Buffer.byteLength(char));
  const note = char.repeat(count) + 'x'.repeat(room - count * Buffer.byteLength(char));
  const text = JSON.stringify({ ...good, values: { ...good.values, note } });
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

const tooLong = { ok: false, reason: `The audit record is longer than ${MAX_RECORD_JSON_BYTES} bytes.` };

describe('audit record size', () => {
  it.each([
    ['one byte per character', 'x'],
    ['two bytes per character', 'é'],
    ['three bytes per character', '€'],
  ])('reads a record of exactly the limit and refuses one byte more (%s)', (_name, char) => {
    const { rows, failed } = readAuditRows([
      row(recordOfBytes(MAX_RECORD_JSON_BYTES, char)),
      row(recordOfBytes(MAX_RECORD_JSON_BYTES + 1, char)),
    ]);
    expect(rows[0]).toMatchObject({ ok: true, record: { uuid: good.uuid } });
    expect(rows[1]).toEqual(tooLong);
    expect(failed).toEqual([1]);
  });
});

describe('audit record depth', () => {
  const nested = (levels: number, leaf: unknown, asArray: boolean): unknown => {
    let value = leaf;
    for (let i = 0; i < levels; i++) value = asArray ? [value] : { next: value };
    return value;
  };
  // The record object itself is one level, `values` a second.
  const recordNesting = (levels: number, asArray: boolean) =>
    JSON.stringify({ ...good, values: { deep: nested(levels - 2, 1, asArray) } });

  it.each([
    ['objects', false],
    ['arrays', true],
  ])('reads a record nested exactly to the limit and refuses one level more (%s)', (_name, asArray) => {
    const { rows, failed } = readAuditRows([
      row(recordNesting(MAX_RECORD_DEPTH, asArray)),
      row(recordNesting(MAX_RECORD_DEPTH + 1, asArray)),
    ]);
    expect(rows[0]).toMatchObject({ ok: true });
    expect(rows[1]).toEqual({ ok: false, reason: `The audit record is nested deeper than ${MAX_RECORD_DEPTH} levels.` });
    expect(failed).toEqual([1]);
  });
});

describe('unreadable rows of one page', () => {
  const wrongShape = JSON.stringify({ ...good, baseType: 'Nope' });

  it('names the problems of the first 20 records of the wrong shape, and not of the rest', () => {
    const { rows, failed } = readAuditRows([row(JSON.stringify(good)), ...Array.from({ length: 25 }, () => row(wrongShape))]);
    expect(rows[0]).toMatchObject({ ok: true });
    expect(failed).toHaveLength(25);
    for (const result of rows.slice(1, 21)) {
      expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/^The audit record does not match its documented shape \(baseType: .+\)\.$/) });
    }
    for (const result of rows.slice(21)) {
      expect(result).toEqual({ ok: false, reason: 'The audit record does not match its documented shape.' });
    }
  });

  it('keeps one result object for all the rows that fail the same way (a million broken rows, not a million objects)', () => {
    const missing = ['1561399981109', null, null, null, 1];
    const { rows } = readAuditRows([missing, missing, row('{'), row('{'), ...Array.from({ length: 22 }, () => row(wrongShape))]);
    expect(rows[0]).toEqual({ ok: false, reason: 'The audit record is missing.' });
    expect(rows[1]).toBe(rows[0]);
    expect(rows[2]).toEqual({ ok: false, reason: 'The audit record is not valid JSON.' });
    expect(rows[3]).toBe(rows[2]);
    expect(rows[25]).toBe(rows[24]);
  });
});
