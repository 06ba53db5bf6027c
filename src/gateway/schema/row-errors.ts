/**
 * Row errors of auditEvents and of update session file lists: a page or list with an unreadable
 * row still comes back, and the row is an entry in `errors`. graphql-js lets a resolver return
 * data or throw, not both, so resolvers queue these errors in the request's context cache and
 * `useRowErrors()` (src/gateway/plugins/execution/audit-row-errors.ts) appends them to the result.
 * The entries are plain GraphQLErrors with a safe message and extensions.code, so error masking
 * leaves them as they are; the rows' reasons go to the log, never into the entries.
 */
import { createContextCache } from '@pothos/core';
import type { GraphQLError } from 'graphql';

const pendingRowErrors = createContextCache((): GraphQLError[] => []);

/** Queues errors that belong in this request's `errors` without failing the field that found them. */
export function reportRowErrors(context: object, errors: readonly GraphQLError[]): void {
  if (errors.length > 0) pendingRowErrors(context).push(...errors);
}

/** The errors queued since the last call, now taken out of the queue (undefined: none). */
export function takeRowErrors(context: object): GraphQLError[] | undefined {
  const pending = pendingRowErrors(context).splice(0);
  return pending.length > 0 ? pending : undefined;
}
