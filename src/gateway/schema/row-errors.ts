/**
 * Row errors of auditEvents and of update session file lists: a page or list with an unreadable
 * row still comes back, and the row is an entry in `errors`. graphql-js lets a resolver return
 * data or throw, not both, so resolvers queue these errors in the request's context cache and
 * `useRowErrors()` (src/gateway/plugins/execution/audit-row-errors.ts) appends them to the result.
 */
import { createContextCache } from '@pothos/core';
import { GraphQLError, responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import { ErrorCode } from '../../lib/errors.js';

/** Error entries per list beyond which the rest are summed up in one entry. */
export const MAX_ROW_ERRORS_PER_LIST = 50;

const pendingRowErrors = createContextCache((): GraphQLError[] => []);

/**
 * Queues an UPSTREAM_INVALID_RESPONSE entry at the field's path for each position, then one for the
 * rest. Message and code only, never the upstream's values: every masking setup passes them as they are.
 */
export function reportRowErrors(
  context: object,
  info: GraphQLResolveInfo,
  positions: readonly number[],
  one: (position: number) => string,
  rest: (count: number, from: number, to: number) => string,
): void {
  const entry = (message: string) =>
    new GraphQLError(message, {
      nodes: info.fieldNodes,
      path: responsePathAsArray(info.path),
      extensions: { code: ErrorCode.UPSTREAM_INVALID_RESPONSE },
    });
  const errors = positions.slice(0, MAX_ROW_ERRORS_PER_LIST).map((position) => entry(one(position)));
  const more = positions.slice(MAX_ROW_ERRORS_PER_LIST);
  if (more.length > 0) errors.push(entry(rest(more.length, more[0]!, more.at(-1)!)));
  pendingRowErrors(context).push(...errors);
}

/** The errors queued since the last call, now taken out of the queue (undefined: none). */
export function takeRowErrors(context: object): GraphQLError[] | undefined {
  const pending = pendingRowErrors(context).splice(0);
  return pending.length > 0 ? pending : undefined;
}
