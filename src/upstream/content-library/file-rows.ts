/** Reads a list's files one by one: one that does not match its model becomes `{ok: false}` in place. */
import { summarizeIssues } from '../error-mapping.js';
import { countValues, DEEPER } from '../schemas.js';
import type { UpdateSessionFileRow } from '../types.js';
import { fileInfoSchema } from './schemas.js';

/** A file nested deeper is unreadable: the model's recursion would exhaust the stack. */
export const MAX_FILE_DEPTH = 64;
/** Unreadable files whose problems the log names (where and what, never the values), per answer. */
export const EXPLAINED_PER_ANSWER = 20;

// Shared: a list of many broken files keeps one slot per file, not an object each.
const UNREADABLE: UpdateSessionFileRow = { ok: false };

export function readFileRows(values: readonly unknown[]) {
  const explained: { position: number; problem: string; issues?: ReturnType<typeof summarizeIssues> }[] = [];
  let unreadable = 0;
  const rows = values.map((value, position): UpdateSessionFileRow => {
    const parsed = countValues(value, MAX_FILE_DEPTH) === DEEPER ? undefined : fileInfoSchema.safeParse(value);
    if (parsed?.success) return { ok: true, file: parsed.data };
    if (unreadable++ < EXPLAINED_PER_ANSWER) {
      explained.push(
        parsed
          ? { position, problem: 'does not match its schema', issues: summarizeIssues(parsed.error.issues, 3) }
          : { position, problem: `nested deeper than ${MAX_FILE_DEPTH} levels` },
      );
    }
    return UNREADABLE;
  });
  return { rows, unreadable, explained };
}
