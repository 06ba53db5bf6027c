/**
 * x-request-id: honoured when the client sends a plain token, created otherwise, echoed on the
 * response and carried by every log line of the request. The id is also the request's async
 * scope, so code without the GraphQL context (Yoga's own log lines, the process's last-resort
 * error handlers) can still name the request it ran for.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';

const ACCEPTABLE = /^[\w.:-]{1,128}$/;
const ids = new WeakMap<Request, string>();
const scope = new AsyncLocalStorage<string>();

export function requestIdOf(request: Request): string {
  let id = ids.get(request);
  if (!id) {
    const given = request.headers.get('x-request-id');
    id = given && ACCEPTABLE.test(given) ? given : randomUUID();
    ids.set(request, id);
  }
  return id;
}

/** The id of the request the current code runs for, if any. */
export const currentRequestId = (): string | undefined => scope.getStore();

/** Runs `work` as part of request `id`: whatever it starts reports that id. */
export const withRequestId = <T>(id: string, work: () => T): T => scope.run(id, work);

export function useRequestId(): Plugin {
  return {
    instrumentation: {
      request: ({ request }, handle) => withRequestId(requestIdOf(request), handle),
    },
    onRequest({ request }) {
      requestIdOf(request);
    },
    onResponse({ request, response }) {
      response.headers.set('x-request-id', requestIdOf(request));
    },
  };
}
