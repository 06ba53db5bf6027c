/** Reads a list's files one by one: one that does not match its model becomes `{ok: false}` in place. */
import { summarizeIssues } from '../error-mapping.js';
import type { UpdateSessionFileRow } from '../types.js';
import { fileInfoSchema, type FileInfo } from './schemas.js';

/** A file nested deeper is unreadable: the model's recursion would exhaust the stack. */
export const MAX_FILE_DEPTH = 64;
/** Unreadable files whose problems the log names, per answer; the others are only counted. */
export const EXPLAINED_PER_ANSWER = 20;
/** Model issues named per file. */
const ISSUES_PER_FILE = 3;

/** Why a file could not be read, for the log: where and what, never the upstream's values. */
export interface UnreadableFile {
  readonly position: number;
  readonly problem: string;
  readonly issues?: ReturnType<typeof summarizeIssues>;
}

export interface FileRowsResult {
  readonly rows: UpdateSessionFileRow[];
  /** How many files could not be read. */
  readonly unreadable: number;
  /** The first EXPLAINED_PER_ANSWER of them. */
  readonly explained: UnreadableFile[];
}

// Shared: a list of many broken files keeps one slot per file, not an object each.
const UNREADABLE: UpdateSessionFileRow = { ok: false };

export function readFileRows(values: readonly unknown[]): FileRowsResult {
  const explained: UnreadableFile[] = [];
  let unreadable = 0;
  const rows = values.map((value, position): UpdateSessionFileRow => {
    const read = readFile(value);
    if (read.ok) return read;
    if (unreadable < EXPLAINED_PER_ANSWER) explained.push({ position, ...read.why });
    unreadable++;
    return UNREADABLE;
  });
  return { rows, unreadable, explained };
}

function readFile(value: unknown): { ok: true; file: FileInfo } | { ok: false; why: Omit<UnreadableFile, 'position'> } {
  if (nestedDeeperThan(value, MAX_FILE_DEPTH)) {
    return { ok: false, why: { problem: `nested deeper than ${MAX_FILE_DEPTH} levels` } };
  }
  const parsed = fileInfoSchema.safeParse(value);
  if (parsed.success) return { ok: true, file: parsed.data };
  const issues = summarizeIssues(parsed.error.issues, ISSUES_PER_FILE);
  return { ok: false, why: { problem: 'does not match its schema', issues } };
}

/** Whether objects and arrays nest more than `levels` deep; recursion goes at most `levels` calls deep. */
function nestedDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  const members = value as Record<string, unknown>;
  for (const key in members) {
    if (nestedDeeperThan(members[key], levels - 1)) return true;
  }
  return false;
}
