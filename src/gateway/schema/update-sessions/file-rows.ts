/**
 * A file the upstream layer could not read is left out of its list: the list is
 * `[UpdateSessionFile!]`, so a null item would null every file. It is an UPSTREAM_INVALID_RESPONSE
 * entry at the list's path instead, naming its position in the upstream's list (an index in the
 * path would point at the file that took its place), through the row errors auditEvents uses.
 * The upstream layer has logged why.
 */
import { GraphQLError, responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import { ErrorCode } from '../../../lib/errors.js';
import type { FileInfo } from '../../../upstream/content-library/schemas.js';
import type { UpdateSessionFileRow } from '../../../upstream/types.js';
import { reportRowErrors } from '../row-errors.js';

/** Error entries per list beyond which the rest are summed up in one entry. */
export const MAX_FILE_ERRORS_PER_LIST = 50;

export function readableFiles(
  rows: readonly UpdateSessionFileRow[],
  context: object,
  info: GraphQLResolveInfo,
): FileInfo[] {
  const files: FileInfo[] = [];
  const unreadable: number[] = [];
  rows.forEach((row, position) => {
    if (row.ok) files.push(row.file);
    else unreadable.push(position);
  });
  // Stryker disable next-line ConditionalExpression,EqualityOperator: reportRowErrors ignores an empty list; the check only spares building it for every list read whole
  if (unreadable.length > 0) reportRowErrors(context, fileErrors(info, unreadable));
  return files;
}

/** Message and code only, never the upstream's values: every masking setup passes them as they are. */
function fileErrors(info: GraphQLResolveInfo, positions: readonly number[]): GraphQLError[] {
  const list = responsePathAsArray(info.path);
  const entry = (message: string) =>
    new GraphQLError(message, {
      nodes: info.fieldNodes,
      path: list,
      extensions: { code: ErrorCode.UPSTREAM_INVALID_RESPONSE },
    });
  const errors = positions
    .slice(0, MAX_FILE_ERRORS_PER_LIST)
    .map((position) => entry(`The update session file at position ${position} of the upstream's list could not be read; it is left out.`));
  const rest = positions.slice(MAX_FILE_ERRORS_PER_LIST);
  if (rest.length > 0) {
    const where = `positions ${rest[0]} to ${rest.at(-1)}`;
    errors.push(entry(`${rest.length} more update session files (${where} of the upstream's list) could not be read; they are left out.`));
  }
  return errors;
}
