/** x-request-id (the client's plain token or a fresh one), echoed; the request's async scope names it outside its context. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { RequestState } from '../../context.js';

const ACCEPTABLE = /^[\w.:-]{1,128}$/;
const scope = new AsyncLocalStorage<string>();

function idFor(request: Request): string {
  const given = request.headers.get('x-request-id');
  return given && ACCEPTABLE.test(given) ? given : randomUUID();
}

export const currentRequestId = (): string | undefined => scope.getStore();

export const withRequestId = <T>(id: string, work: () => T): T => scope.run(id, work);

/** The request's id; one Yoga ends before our hooks run (a CORS preflight) has only its scope. */
export const requestIdOf = (state: RequestState): string => state.requestId ?? currentRequestId() ?? 'unknown';

export function useRequestId(): Plugin<object, RequestState> {
  return {
    instrumentation: {
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
