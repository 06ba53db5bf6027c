/**
 * Hive Gateway in front of the content gateway, the router authenticating with a key of its own:
 * every request to the `content` subgraph carries CONTENT_GATEWAY_API_KEY (one of the content
 * gateway's GATEWAY_API_KEYS), whoever the caller is. The router authenticates its callers itself.
 *
 *   CONTENT_GATEWAY_API_KEY=... hive-gateway supergraph supergraph.graphql -c gateway.config.ts
 */
import { defineConfig } from '@graphql-hive/gateway';

export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs: ({ subgraphName }) =>
      subgraphName === 'content' ? { 'x-api-key': process.env.CONTENT_GATEWAY_API_KEY } : undefined,
  },
});
