/**
 * Row errors of auditEvents: a page with an unreadable row still comes back, and the row is an
 * entry in `errors`. graphql-js lets a resolver return data or throw, not both, so resolvers
 * collect these errors per request (keyed by the context object, nothing added to it) and
 * `useRowErrors()` appends them to the result when execution is done.
 * The entries are plain GraphQLErrors with a safe message and extensions.code, so error masking
 * leaves them as they are; the resolver logs the rows' reasons itself.
 */
import type { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

const pendingByContext = new WeakMap<object, GraphQLError[]>();

/** Queues errors that belong in this request's `errors` without failing the field that found them. */
export function reportRowErrors(context: object, errors: readonly GraphQLError[]): void {
  if (errors.length === 0) return;
  const pending = pendingByContext.get(context);
  if (pending) pending.push(...errors);
  else pendingByContext.set(context, [...errors]);
}

export function useRowErrors(): Plugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        const context = args.contextValue as object;
        const pending = pendingByContext.get(context);
        if (!pending) return;
        pendingByContext.delete(context);
        // This schema has no subscriptions or @defer: results are single.
        if (isAsyncIterable(result)) return;
        setResult({ ...result, errors: [...(result.errors ?? []), ...pending] });
      },
    }),
  };
}
