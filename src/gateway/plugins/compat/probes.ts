/** Probes by path: graphql-yoga 5.24's match the URL's end (`/healthz?x=1` 404, `/graphql?query=...&x=/readyz` a probe). */
import type { Plugin } from 'graphql-yoga';

export function useProbe(endpoint: string, isUp: () => boolean): Plugin {
  return {
    onRequest({ url, fetchAPI, endResponse }) {
      if (url.pathname !== endpoint) return;
      endResponse(new fetchAPI.Response(null, { status: isUp() ? 200 : 503 }));
    },
  };
}
