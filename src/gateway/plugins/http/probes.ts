/**
 * /healthz and /readyz, answered by their path whatever the query string (load balancers add
 * cache-busters); another path, `/healthz/` included, is not a probe. Yoga's own checks match the
 * end of the whole URL instead, so that `/healthz?x=1` would be 404 and `/graphql?query=...&x=/healthz`
 * a health check. A request for any other path reads nothing of its URL but the path.
 */
import type { Plugin } from 'graphql-yoga';

/** Answers `endpoint` with 200 while `isUp()`, 503 otherwise, and with no body. */
export function useProbe(endpoint: string, isUp: () => boolean): Plugin {
  return {
    onRequest({ url, fetchAPI, endResponse }) {
      if (url.pathname !== endpoint) return;
      endResponse(new fetchAPI.Response(null, { status: isUp() ? 200 : 503 }));
    },
  };
}
