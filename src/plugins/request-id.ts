/**
 * x-request-id: honoured when the client sends a plain token, created otherwise, echoed on the
 * response and carried by every log line of the request.
 */
import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';

const ACCEPTABLE = /^[\w.:-]{1,128}$/;
const ids = new WeakMap<Request, string>();

export function requestIdOf(request: Request): string {
  let id = ids.get(request);
  if (!id) {
    const given = request.headers.get('x-request-id');
    id = given && ACCEPTABLE.test(given) ? given : randomUUID();
    ids.set(request, id);
  }
  return id;
}

export function useRequestId(): Plugin {
  return {
    onRequest({ request }) {
      requestIdOf(request);
    },
    onResponse({ request, response }) {
      response.headers.set('x-request-id', requestIdOf(request));
    },
  };
}
