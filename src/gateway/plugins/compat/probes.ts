/**
 * /healthz and /readyz, answered by their path whatever the query string (load balancers add
 * cache-busters). In place of graphql-yoga 5.24's health and readiness checks, which match the end
 * of the whole URL: `/healthz?x=1` is 404 and `/graphql?query=...&x=/readyz` a probe.
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
