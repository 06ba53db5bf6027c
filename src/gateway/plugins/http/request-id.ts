/**
 * x-request-id: honoured when the client sends a plain token, created otherwise, echoed on the
 * response and carried by every log line of the request. The id lives on the request's server
 * context (and so on its GraphQL context); it is also the request's async scope, so code without
 * the context (Yoga's own log lines, the process's last-resort error handlers) can still name the
 * request it ran for.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { RequestState } from '../../context.js';

const ACCEPTABLE = /^[\w.:-]{1,128}$/;
const scope = new AsyncLocalStorage<string>();

/** The client's id when it is a plain token, a fresh one otherwise. */
function idFor(request: Request): string {
  const given = request.headers.get('x-request-id');
  return given && ACCEPTABLE.test(given) ? given : randomUUID();
}

/** The id of the request the current code runs for, if any. */
export const currentRequestId = (): string | undefined => scope.getStore();

/** Runs `work` as part of request `id`: whatever it starts reports that id. */
export const withRequestId = <T>(id: string, work: () => T): T => scope.run(id, work);

/**
 * The id of the request whose server context this is. A response Yoga ends before our hooks run
 * (health, CORS preflight) has none on its context, but still runs in the request's scope.
 */
export const requestIdOf = (state: RequestState): string => state.requestId ?? currentRequestId() ?? 'unknown';

export function useRequestId(): Plugin<object, RequestState> {
  return {
    instrumentation: {
      // The scope wraps the whole request, so the id is chosen here, before any hook runs.
      request: ({ request }, handle) => withRequestId(idFor(request), handle),
    },
    onRequest({ request, serverContext }) {
      serverContext.requestId = currentRequestId() ?? idFor(request);
    },
    onResponse({ response, serverContext }) {
      response.headers.set('x-request-id', requestIdOf(serverContext));
    },
  };
}
