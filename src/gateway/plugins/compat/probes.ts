/**
 * Probes answered by their path, whatever the query string: graphql-yoga 5.24's match the end of the
 * whole URL (`/healthz?x=1` is 404, `/graphql?query=...&x=/readyz` a probe). 200 while up, else 503.
 */
import type { Plugin } from 'graphql-yoga';

export function useProbe(endpoint: string, isUp: () => boolean): Plugin {
  return {
    onRequest({ url, fetchAPI, endResponse }) {
      if (url.pathname !== endpoint) return;
      endResponse(new fetchAPI.Response(null, { status: isUp() ? 200 : 503 }));
    },
  };
}
