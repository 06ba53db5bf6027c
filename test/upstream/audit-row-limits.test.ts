/**
 * The size, depth and value-count limits on one audit record (at the limit it is read, past it the
 * row is unreadable), the value count of one page, and what unreadable rows keep.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_PAGE_VALUES,
  MAX_RECORD_DEPTH,
  MAX_RECORD_JSON_BYTES,
  MAX_RECORD_VALUES,
  readAuditRows,
} from '../../src/upstream/identity/audit-row-parsing.js';

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

describe('audit record values', () => {
  const tooMany = { ok: false, reason: `The audit record holds more than ${MAX_RECORD_VALUES} JSON values.` };
  // `good` holds 8 JSON values: itself, its 4 scalars, `values` and its 2 scalars; `list` adds itself and its items.
  const recordOfValues = (count: number, item: unknown = 0) =>
    JSON.stringify({ ...good, values: { ...good.values, list: new Array(count - 9).fill(item) } });

  it.each([
    ['scalars', 0],
    ['empty objects', {}],
    ['empty arrays', []],
  ])('reads a record of exactly the limit and refuses one value more (%s); the rows around it are read', (_name, item) => {
    const { rows, failed } = readAuditRows([
      row(recordOfValues(MAX_RECORD_VALUES, item)),
      row(recordOfValues(MAX_RECORD_VALUES + 1, item)),
      row(JSON.stringify(good)),
    ]);
    expect(rows[0]).toMatchObject({ ok: true, record: { uuid: good.uuid } });
    expect(rows[1]).toEqual(tooMany);
    expect(rows[2]).toMatchObject({ ok: true });
    expect(failed).toEqual([1]);
  });

  it.each([
    ['arrays', true],
    ['objects', false],
  ])('stops reading a record once it is past the limit: one nested too deep further on is refused for its values (%s)', (_name, asArray) => {
    let deep: unknown = 1;
    for (let i = 0; i < MAX_RECORD_DEPTH; i++) deep = asArray ? [deep] : { next: deep };
    const zeros = new Array(600).fill(0);
    const group = (items: unknown[]) => (asArray ? items : Object.fromEntries(items.map((item, i) => [`k${i}`, item])));
    // 600 values, then 600 more before the deep branch: the second group passes the limit before its end.
    const record = JSON.stringify({ ...good, values: { ...good.values, a: group(zeros), b: group([...zeros, deep]) } });
    const { rows } = readAuditRows([row(record)]);
    expect(rows[0]).toEqual(tooMany);
  });

  it("gives an array's later elements only the room its earlier ones left: one nested too deep further on is refused for its values", () => {
    let deep: unknown = 1;
    for (let i = 0; i < MAX_RECORD_DEPTH; i++) deep = [deep];
    const zeros = new Array(600).fill(0);
    // Both groups in one array: the second has room for about 400 values, so it stops before the deep branch.
    const record = JSON.stringify({ ...good, values: { ...good.values, list: [zeros, [...zeros, deep]] } });
    expect(readAuditRows([row(record)]).rows[0]).toEqual(tooMany);
  });

  it('counts the members of objects: a `values` of 65,000 keys is refused', () => {
    const values = Object.fromEntries(Array.from({ length: 65_000 }, (_, i) => [`k${i}`, i]));
    const { rows } = readAuditRows([row(JSON.stringify({ ...good, values }))]);
    expect(rows[0]).toEqual(tooMany);
  });

  it('refuses a record of 340,000 empty objects just under 1 MB (about 22 MB of heap parsed), the others read', () => {
    const heavy = `{"baseType":"Action","uuid":"u","timestamp":1,"objectType":"LOGIN","x":[${new Array(340_000).fill('{}').join(',')}]}`;
    expect(heavy.length).toBeLessThan(MAX_RECORD_JSON_BYTES);
    const { rows, failed } = readAuditRows([row(JSON.stringify(good)), row(heavy), row(JSON.stringify(good))]);
    expect(rows[1]).toEqual(tooMany);
    expect(failed).toEqual([1]);
  });
});

describe('audit page values', () => {
  const pageFull = {
    ok: false,
    reason: `The audit page's records hold more than ${MAX_PAGE_VALUES} JSON values; this one and the rest were not read.`,
  };
  const full = JSON.stringify({ ...good, values: { list: new Array(MAX_RECORD_VALUES - 7).fill({}) } });

  it('reads records up to the page bound; from the first that would pass it, the rest of the page is unreadable', () => {
    const fullRecords = MAX_PAGE_VALUES / MAX_RECORD_VALUES;
    const data = [
      ...Array.from({ length: fullRecords - 1 }, () => row(full)),
      // Unreadable records keep nothing, so they do not count.
      row(JSON.stringify({ ...good, values: { list: new Array(MAX_RECORD_VALUES).fill(0) } })),
      row(full), // the page's last value
      row(JSON.stringify(good)),
      row('{'), // not read any more: no parse, no reason of its own
    ];
    const { rows, failed } = readAuditRows(data);
    expect(rows.slice(0, fullRecords - 1).every((r) => r.ok)).toBe(true);
    expect(rows[fullRecords]).toMatchObject({ ok: true });
    expect(rows.slice(fullRecords + 1)).toEqual([pageFull, pageFull]);
    expect(failed).toEqual([fullRecords - 1, fullRecords + 1, fullRecords + 2]);
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
