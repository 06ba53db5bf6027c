/**
 * Reads the event record carried as a JSON string in the last column of each audit row, row by
 * row: a row that cannot be read becomes `{ok: false}` in place, so offsets stay right.
 * Hot path (5000-row pages): one JSON.parse and one in-place check per row (zod only for a row
 * the check does not accept), one output array.
 */
import type { AuditRowResult } from '../types.js';
import { asAuditRecord } from './fast-checks.js';
import { auditRecordSchema } from './schemas.js';

export interface AuditRowsResult {
  readonly rows: AuditRowResult[];
  /** Positions of unreadable rows, for the log. */
  readonly failed: number[];
  /** JSON values of the records read (see countValues), for the page's heap estimate. */
  readonly values: number;
}

export function readAuditRows(data: readonly unknown[]): AuditRowsResult {
  // Stryker disable next-line ArrayDeclaration: a preallocated length only saves growing; every slot is written below
  const rows = new Array<AuditRowResult>(data.length);
  const failed: number[] = [];
  const reader = new RecordReader();
  for (let i = 0; i < data.length; i++) {
    const row = data[i];
    const result = Array.isArray(row) ? reader.read(row[row.length - 1]) : NOT_A_ROW;
    if (!result.ok) failed.push(i);
    rows[i] = result;
  }
  return { rows, failed, values: reader.values };
}

/** A record's JSON string longer than this is unreadable (real records are a few hundred bytes). */
export const MAX_RECORD_JSON_BYTES = 1024 * 1024;
/** A record nested deeper than this is unreadable: serializing it again could exhaust the stack. */
export const MAX_RECORD_DEPTH = 64;
/**
 * A record holding more JSON values than this is unreadable (real records hold a few dozen): a
 * parsed value takes up to 96 bytes of heap for as few as 3 bytes of JSON (`{},`).
 */
export const MAX_RECORD_VALUES = 1000;
/**
 * The records of one page hold at most this many JSON values in all (a real 5000-row page: about
 * 110,000), about 48 MB of heap at worst. A per-record bound alone cannot do it: records repeat.
 * From the first record that would pass it, the rest of the page is unreadable, and not read.
 */
export const MAX_PAGE_VALUES = 500_000;

/**
 * Heap a page takes at most, by measurement (Node 20, x64; docs/hard-limits.md): its strings up to
 * 2.25 times the body's bytes (ASCII in a string that also holds a character past Latin-1 takes two
 * bytes a character, and strings over 128 KB some 6 % more), each JSON value up to 96 bytes more
 * (an empty object as the member of an object: 88-92), and each row one value more for its result.
 */
const HEAP_BYTES_PER_BODY_BYTE = 2.25;
const HEAP_BYTES_PER_VALUE = 96;

export function pageHeapBytes(bodyBytes: number, read: AuditRowsResult): number {
  return Math.ceil(HEAP_BYTES_PER_BODY_BYTE * bodyBytes) + HEAP_BYTES_PER_VALUE * (read.values + read.rows.length);
}

const NOT_A_ROW: AuditRowResult = { ok: false, reason: 'The audit row is not an array.' };
// Shared: a page of a million broken rows keeps one slot per row, not an object each.
const MISSING: AuditRowResult = { ok: false, reason: 'The audit record is missing.' };
const TOO_LONG: AuditRowResult = { ok: false, reason: `The audit record is longer than ${MAX_RECORD_JSON_BYTES} bytes.` };
const NOT_JSON: AuditRowResult = { ok: false, reason: 'The audit record is not valid JSON.' };
const TOO_DEEP: AuditRowResult = { ok: false, reason: `The audit record is nested deeper than ${MAX_RECORD_DEPTH} levels.` };
const TOO_MANY_VALUES: AuditRowResult = {
  ok: false,
  reason: `The audit record holds more than ${MAX_RECORD_VALUES} JSON values.`,
};
const PAGE_FULL: AuditRowResult = {
  ok: false,
  reason: `The audit page's records hold more than ${MAX_PAGE_VALUES} JSON values; this one and the rest were not read.`,
};

/**
 * Records of the wrong shape named with their problems, per page: the log shows the first 20
 * unreadable rows, and a page of a million such rows would keep a message each.
 */
const EXPLAINED_PER_PAGE = 20;
const WRONG_SHAPE: AuditRowResult = { ok: false, reason: 'The audit record does not match its documented shape.' };

/** Reads the records of one page, counting the values it keeps against the page's bound. */
class RecordReader {
  values = 0;
  #full = false;
  #explained = 0;

  /** Reasons name the problem, never the record's content (a JSON.parse message quotes the input). */
  read(column: unknown): AuditRowResult {
    if (this.#full) return PAGE_FULL;
    if (typeof column !== 'string') return MISSING;
    // A string has at most three UTF-8 bytes per character: below a third of the limit none is counted.
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the shortcut saves work only, the byte count decides
    const mayBeTooLong = column.length > MAX_RECORD_JSON_BYTES / 3;
    if (mayBeTooLong && Buffer.byteLength(column) > MAX_RECORD_JSON_BYTES) return TOO_LONG;
    let json: unknown;
    try {
      json = JSON.parse(column);
    } catch {
      return NOT_JSON;
    }
    const values = countValues(json, MAX_RECORD_DEPTH, MAX_RECORD_VALUES);
    if (values === DEEPER) return TOO_DEEP;
    if (values > MAX_RECORD_VALUES) return TOO_MANY_VALUES;
    const result = asRecord(json, this.#explained < EXPLAINED_PER_PAGE);
    if (!result.ok) {
      this.#explained++;
      return result;
    }
    if (this.values + values > MAX_PAGE_VALUES) {
      this.#full = true;
      return PAGE_FULL;
    }
    this.values += values;
    return result;
  }
}

function asRecord(json: unknown, explain: boolean): AuditRowResult {
  const record = asAuditRecord(json);
  // Stryker disable next-line ConditionalExpression: the model then answers the same record, only slower
  if (record) return { ok: true, record };
  const parsed = auditRecordSchema.safeParse(json);
  // The model stays the authority should the check ever refuse more than it (fast-checks.test.ts holds them equal both ways).
  // Stryker disable next-line ConditionalExpression,ObjectLiteral,BooleanLiteral: no record reaches here that the model accepts
  if (parsed.success) return { ok: true, record: parsed.data };
  if (!explain) return WRONG_SHAPE;
  const problems = parsed.error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length ? `${fieldOf(issue.path)}: ${issue.message}` : issue.message));
  return { ok: false, reason: `The audit record does not match its documented shape (${problems.join('; ')}).` };
}

// Stryker disable next-line StringLiteral: the record's model has no nested fields, so every path has one element
const fieldOf = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** countValues' answer for a value nested deeper than its limit. */
const DEEPER = -1;

/**
 * The JSON values in `value`: itself and every object, array and scalar inside it. Counting stops
 * once past `room` (the answer is then room + 1 at most), or with DEEPER at the first branch where
 * objects and arrays nest more than `depth` levels. Recursion is safe here: it goes at most
 * `depth` calls deep. No arrays are made on the way (this runs for every record).
 */
function countValues(value: unknown, depth: number, room: number): number {
  if (typeof value !== 'object' || value === null) return 1;
  if (depth === 0) return DEEPER;
  let count = 1;
  // Stryker disable next-line BlockStatement,ConditionalExpression: only faster than the for...in below, which reaches the same elements of a parsed array
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = countValues(value[i], depth - 1, room - count);
      if (inner === DEEPER) return DEEPER;
      count += inner;
      if (count > room) return count;
    }
    return count;
  }
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    const inner = countValues(fields[key], depth - 1, room - count);
    if (inner === DEEPER) return DEEPER;
    count += inner;
    if (count > room) return count;
  }
  return count;
}
