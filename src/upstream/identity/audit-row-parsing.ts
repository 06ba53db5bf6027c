/**
 * Reads the record carried as a JSON string in the last column of each audit row: a row that cannot
 * be read becomes `{ok: false}` in place, so offsets stay right. Hot path: one JSON.parse and one
 * in-place check per row, zod only for a row the check does not accept.
 */
import { summarizeIssues } from '../error-mapping.js';
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
  const failed: number[] = [];
  const reader = new RecordReader();
  const rows = data.map((row, i) => {
    const result = Array.isArray(row) ? reader.read(row[row.length - 1]) : NOT_A_ROW;
    if (!result.ok) failed.push(i);
    return result;
  });
  return { rows, failed, values: reader.values };
}

/** A record's JSON string longer than this is unreadable (real records are a few hundred bytes). */
export const MAX_RECORD_JSON_BYTES = 1024 * 1024;
/** A record nested deeper than this is unreadable: serializing it again could exhaust the stack. */
export const MAX_RECORD_DEPTH = 64;
/** A record holding more JSON values than this is unreadable: a parsed value takes far more heap than its JSON. */
export const MAX_RECORD_VALUES = 1000;
/**
 * The records of one page hold at most this many JSON values in all (records repeat, so a bound per
 * record is not enough). From the first record that would pass it, the rest of the page is not read.
 */
export const MAX_PAGE_VALUES = 500_000;

/**
 * Heap a page takes at most (docs/hard-limits.md): its strings a little over twice the body's bytes
 * (two bytes a character once one is past Latin-1), plus each JSON value, and one more per row for its result.
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

/** Records of the wrong shape whose problems are named, per page; the others share one reason. */
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
    // At most three UTF-8 bytes per character: below a third of the limit no byte is counted.
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
  if (record) return { ok: true, record };
  // The model stays the authority should the check ever refuse more than it.
  const parsed = auditRecordSchema.safeParse(json);
  if (parsed.success) return { ok: true, record: parsed.data };
  if (!explain) return WRONG_SHAPE;
  const problems = summarizeIssues(parsed.error.issues, 3).map((issue) =>
    issue.path ? `${issue.path}: ${issue.message}` : issue.message,
  );
  return { ok: false, reason: `The audit record does not match its documented shape (${problems.join('; ')}).` };
}

/** countValues' answer for a value nested deeper than its limit. */
const DEEPER = -1;

/**
 * The JSON values in `value`, itself included; stops once past `room`, or with DEEPER where objects
 * and arrays nest more than `depth` levels (so the recursion goes at most `depth` calls deep).
 */
function countValues(value: unknown, depth: number, room: number): number {
  if (typeof value !== 'object' || value === null) return 1;
  if (depth === 0) return DEEPER;
  let count = 1;
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    const inner = countValues(fields[key], depth - 1, room - count);
    if (inner === DEEPER) return DEEPER;
    count += inner;
    if (count > room) return count;
  }
  return count;
}
