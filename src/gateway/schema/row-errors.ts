/** A list with an unreadable row still comes back, the row an entry in `errors`, queued for `useRowErrors()`. */
import { createContextCache } from '@pothos/core';
import { GraphQLError, responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import { ErrorCode } from '../../lib/errors.js';

export const MAX_ROW_ERRORS_PER_LIST = 50;

const pendingRowErrors = createContextCache((): GraphQLError[] => []);

/** UPSTREAM_INVALID_RESPONSE entries, message and code only, so that masking passes them: the first 50, then one for the rest. */
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
