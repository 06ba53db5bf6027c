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
  return { rows, failed };
}

/** A record's JSON string longer than this is unreadable (real records are a few hundred bytes). */
export const MAX_RECORD_JSON_BYTES = 1024 * 1024;
/** A record nested deeper than this is unreadable: serializing it again could exhaust the stack. */
export const MAX_RECORD_DEPTH = 64;

const NOT_A_ROW: AuditRowResult = { ok: false, reason: 'The audit row is not an array.' };
// Shared: a page of a million broken rows keeps one slot per row, not an object each.
const MISSING: AuditRowResult = { ok: false, reason: 'The audit record is missing.' };
const TOO_LONG: AuditRowResult = { ok: false, reason: `The audit record is longer than ${MAX_RECORD_JSON_BYTES} bytes.` };
const NOT_JSON: AuditRowResult = { ok: false, reason: 'The audit record is not valid JSON.' };
const TOO_DEEP: AuditRowResult = { ok: false, reason: `The audit record is nested deeper than ${MAX_RECORD_DEPTH} levels.` };

/**
 * Records of the wrong shape named with their problems, per page: the log shows the first 20
 * unreadable rows, and a page of a million such rows would keep a message each.
 */
const EXPLAINED_PER_PAGE = 20;
const WRONG_SHAPE: AuditRowResult = { ok: false, reason: 'The audit record does not match its documented shape.' };

/** Reads the records of one page. */
class RecordReader {
  #explained = 0;

  /** Reasons name the problem, never the record's content (a JSON.parse message quotes the input). */
  read(column: unknown): AuditRowResult {
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
    if (deeperThan(json, MAX_RECORD_DEPTH)) return TOO_DEEP;
    const result = asRecord(json, this.#explained < EXPLAINED_PER_PAGE);
    if (!result.ok) this.#explained++;
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

/**
 * Whether objects and arrays nest more than `limit` levels. Recursion is safe here: it goes at most
 * `limit` calls deep, and stops at the first branch too deep. No arrays are made on the way (this
 * runs for every record).
 */
function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  // Stryker disable next-line BlockStatement,ConditionalExpression: only faster than the for...in below, which reaches the same elements of a parsed array
  if (Array.isArray(value)) {
    // Stryker disable next-line EqualityOperator: the element past the end is undefined, never deeper
    for (let i = 0; i < value.length; i++) if (deeperThan(value[i], limit - 1)) return true;
    return false;
  }
  const fields = value as Record<string, unknown>;
  for (const key in fields) if (deeperThan(fields[key], limit - 1)) return true;
  return false;
}
