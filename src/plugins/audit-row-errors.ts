/**
 * Row errors of auditEvents and of update session file lists: a page or list with an unreadable
 * row still comes back, and the row is an entry in `errors`. graphql-js lets a resolver return
 * data or throw, not both, so resolvers collect these errors in the request's context cache and
 * `useRowErrors()` appends them to the result when execution is done.
 * The entries are plain GraphQLErrors with a safe message and extensions.code, so error masking
 * leaves them as they are; the rows' reasons go to the log, never into the entries.
 */
import { createContextCache } from '@pothos/core';
import type { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

const pendingRowErrors = createContextCache((): GraphQLError[] => []);

/** Queues errors that belong in this request's `errors` without failing the field that found them. */
export function reportRowErrors(context: object, errors: readonly GraphQLError[]): void {
  if (errors.length > 0) pendingRowErrors(context).push(...errors);
}

export function useRowErrors(): Plugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        const context = args.contextValue as object;
        const take = () => {
          const pending = pendingRowErrors(context).splice(0);
          return pending.length > 0 ? pending : undefined;
        };
        if (!isAsyncIterable(result)) {
          const pending = take();
          if (pending) setResult({ ...result, errors: [...(result.errors ?? []), ...pending] });
          return;
        }
        // Incremental delivery (@defer/@stream): a page is read before the part that carries it
        // is sent, so its row errors go out with that part.
        return {
          onNext: ({ result: part, setResult: setPart }) => {
            const pending = take();
            if (!pending) return;
            const [first, ...others] = 'incremental' in part && part.incremental?.length ? part.incremental : [];
            if (first) {
              const incremental = [{ ...first, errors: [...(first.errors ?? []), ...pending] }, ...others];
              setPart({ ...part, incremental } as typeof part);
            } else {
              setPart({ ...part, errors: [...(part.errors ?? []), ...pending] });
            }
          },
        };
      },
    }),
  };
}
