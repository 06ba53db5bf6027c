/**
 * A file the upstream layer could not read is left out of its list: the list is
 * `[UpdateSessionFile!]`, so a null item would null every file. It is an entry at the list's path
 * instead, naming its position in the upstream's list (an index in the path would point at the file
 * that took its place). The upstream layer has logged why.
 */
import type { GraphQLResolveInfo } from 'graphql';
import type { FileInfo } from '../../../upstream/content-library/schemas.js';
import type { UpdateSessionFileRow } from '../../../upstream/types.js';
import { reportRowErrors } from '../row-errors.js';

export function readableFiles(rows: readonly UpdateSessionFileRow[], context: object, info: GraphQLResolveInfo): FileInfo[] {
  const files: FileInfo[] = [];
  const unreadable: number[] = [];
  rows.forEach((row, position) => (row.ok ? files.push(row.file) : unreadable.push(position)));
  reportRowErrors(
    context,
    info,
    unreadable,
    (position) => `The update session file at position ${position} of the upstream's list could not be read; it is left out.`,
    (count, from, to) =>
      `${count} more update session files (positions ${from} to ${to} of the upstream's list) could not be read; they are left out.`,
  );
  return files;
}
