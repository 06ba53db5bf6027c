/**
 * Hive Gateway in front of the content gateway, forwarding each caller's own credential to the
 * `content` subgraph: its `x-api-key` or its bearer JWT. The content gateway then authenticates
 * (and logs) the caller itself; a caller without a credential gets UNAUTHENTICATED from it.
 *
 *   hive-gateway supergraph supergraph.graphql -c gateway.config.ts
 */
import { defineConfig } from '@graphql-hive/gateway';

export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs: ({ request, subgraphName }) =>
      subgraphName === 'content'
        ? { 'x-api-key': request.headers.get('x-api-key'), authorization: request.headers.get('authorization') }
        : undefined,
  },
});
