/** The record in each audit row's last column, checked in place (zod only for what the check refuses); bad rows stay. */
import { summarizeIssues } from '../error-mapping.js';
import { countValues, DEEPER } from '../schemas.js';
import type { AuditRowResult } from '../types.js';
import { asAuditRecord } from './fast-checks.js';
import { auditRecordSchema } from './schemas.js';

/** A record's JSON string longer than this is unreadable (real records are a few hundred bytes). */
export const MAX_RECORD_JSON_BYTES = 1024 * 1024;
/** A record nested deeper than this is unreadable: serializing it again could exhaust the stack. */
export const MAX_RECORD_DEPTH = 64;
/** A record holding more JSON values than this is unreadable: a parsed value takes far more heap than its JSON. */
export const MAX_RECORD_VALUES = 1000;
/** JSON values the records of one page hold in all (records repeat); from the first record past it, the rest is not read. */
export const MAX_PAGE_VALUES = 500_000;
/** Records of the wrong shape whose problems are named, per page; the others share one reason. */
const EXPLAINED_PER_PAGE = 20;

// Shared: a million broken rows keep one slot each. A reason never quotes the record, as JSON.parse's message does.
const unreadable = (reason: string): AuditRowResult => ({ ok: false, reason });
const NOT_A_ROW = unreadable('The audit row is not an array.');
const MISSING = unreadable('The audit record is missing.');
const TOO_LONG = unreadable(`The audit record is longer than ${MAX_RECORD_JSON_BYTES} bytes.`);
const NOT_JSON = unreadable('The audit record is not valid JSON.');
const TOO_DEEP = unreadable(`The audit record is nested deeper than ${MAX_RECORD_DEPTH} levels.`);
const TOO_MANY_VALUES = unreadable(`The audit record holds more than ${MAX_RECORD_VALUES} JSON values.`);
const PAGE_FULL = unreadable(
  `The audit page's records hold more than ${MAX_PAGE_VALUES} JSON values; this one and the rest were not read.`,
);
const WRONG_SHAPE = unreadable('The audit record does not match its documented shape.');

/** The rows, the positions of unreadable ones (for the log) and the JSON values kept (for the heap estimate). */
export function readAuditRows(data: readonly unknown[]) {
  const failed: number[] = [];
  let values = 0;
  let full = false;
  let explained = 0;
  const read = (column: unknown): AuditRowResult => {
    if (full) return PAGE_FULL;
    if (typeof column !== 'string') return MISSING;
    // At most three UTF-8 bytes per character: below a third of the limit no byte is counted.
    if (column.length > MAX_RECORD_JSON_BYTES / 3 && Buffer.byteLength(column) > MAX_RECORD_JSON_BYTES) return TOO_LONG;
    let json: unknown;
    try {
      json = JSON.parse(column);
    } catch {
      return NOT_JSON;
    }
    const count = countValues(json, MAX_RECORD_DEPTH, MAX_RECORD_VALUES);
    if (count === DEEPER) return TOO_DEEP;
    if (count > MAX_RECORD_VALUES) return TOO_MANY_VALUES;
    const result = asRecord(json, explained < EXPLAINED_PER_PAGE);
    if (!result.ok) {
      explained++;
      return result;
    }
    if (values + count > MAX_PAGE_VALUES) {
      full = true;
      return PAGE_FULL;
    }
    values += count;
    return result;
  };
  const rows = data.map((row, i) => {
    const result = Array.isArray(row) ? read(row[row.length - 1]) : NOT_A_ROW;
    if (!result.ok) failed.push(i);
    return result;
  });
  return { rows, failed, values };
}

/** Heap a page takes at most (docs/hard-limits.md): strings at two bytes a character, plus each JSON value and row. */
const HEAP_BYTES_PER_BODY_BYTE = 2.25;
const HEAP_BYTES_PER_VALUE = 96;

export function pageHeapBytes(bodyBytes: number, read: ReturnType<typeof readAuditRows>): number {
  return Math.ceil(HEAP_BYTES_PER_BODY_BYTE * bodyBytes) + HEAP_BYTES_PER_VALUE * (read.values + read.rows.length);
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
