/**
 * Apollo Gateway in front of the content gateway (subgraph `content`), in either set-up:
 *
 * - `router-key`: every request to the content gateway carries the router's own key (one of its
 *   GATEWAY_API_KEYS); the router authenticates its callers itself.
 * - `caller`: each operation carries its caller's `x-api-key` or bearer JWT, which the content
 *   gateway checks (and logs) itself.
 *
 * Composing by introspection (IntrospectAndCompose) happens with no caller, so it needs the router's
 * key in both set-ups; composing offline from schema/subgraph.graphql (rover) needs none.
 *
 * Serve it with Apollo Server, putting the caller's credential in the context:
 *
 *   const server = new ApolloServer({ gateway: contentRouter({ ... }) });
 *   await startStandaloneServer(server, {
 *     context: async ({ req }) => ({ apiKey: req.headers['x-api-key'], authorization: req.headers.authorization }),
 *   });
 */
import {
  ApolloGateway,
  IntrospectAndCompose,
  RemoteGraphQLDataSource,
  type GatewayConfig,
  type ServiceEndpointDefinition,
} from '@apollo/gateway';

/** What the router's server puts in each operation's context. */
export type CallerCredentials = {
  readonly apiKey?: string | undefined;
  readonly authorization?: string | undefined;
};

export interface ContentRouterOptions {
  readonly subgraphs: ServiceEndpointDefinition[];
  readonly credential: 'router-key' | 'caller';
  /** One of the content gateway's GATEWAY_API_KEYS, for composing (and every request with `router-key`). */
  readonly routerApiKey: string;
  readonly contentSubgraph?: string;
  readonly logger?: GatewayConfig['logger'];
}

export function contentRouter(options: ContentRouterOptions): ApolloGateway {
  const content = options.contentSubgraph ?? 'content';
  return new ApolloGateway({
    ...(options.logger ? { logger: options.logger } : {}),
    supergraphSdl: new IntrospectAndCompose({
      subgraphs: options.subgraphs,
      introspectionHeaders: (service): Record<string, string> =>
        service.name === content ? { 'x-api-key': options.routerApiKey } : {},
    }),
    buildService: ({ name, url }) =>
      new RemoteGraphQLDataSource<CallerCredentials>({
        url,
        willSendRequest(sent) {
          // Schema loading (no incoming operation) already carries the introspection headers.
          if (name !== content || !('incomingRequestContext' in sent)) return;
          const headers = sent.request.http!.headers;
          if (options.credential === 'router-key') {
            headers.set('x-api-key', options.routerApiKey);
            return;
          }
          if (sent.context.apiKey) headers.set('x-api-key', sent.context.apiKey);
          if (sent.context.authorization) headers.set('authorization', sent.context.authorization);
        },
      }),
  });
}
