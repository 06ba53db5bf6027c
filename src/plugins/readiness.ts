/**
 * /readyz: Yoga's readiness check, asked only about requests for its own path. Yoga's hook tests
 * every request's URL against a URLPattern (a polyfill on Node 20, a few percent of a small
 * request's CPU) after two plain comparisons; for a literal path such as this one, the pattern
 * matches only what the comparisons already match, so every other request skips the hook.
 */
import { useReadinessCheck, type Plugin } from 'graphql-yoga';

export function useReadiness(endpoint: string, check: () => boolean): Plugin {
  const readiness = useReadinessCheck({ endpoint, check });
  const onRequest = readiness.onRequest!;
  return {
    ...readiness,
    onRequest: (payload) =>
      payload.url.pathname === endpoint || payload.request.url.endsWith(endpoint) ? onRequest(payload) : undefined,
  };
}
