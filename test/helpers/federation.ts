/**
 * Real federation tooling around the gateway: a second subgraph ("deployments", built with
 * @apollo/subgraph and served by yoga), loopback listeners, and an ApolloGateway driven through
 * its own executor (@apollo/server is not installed; the executor is what it would call).
 */
import { createHash } from 'node:crypto';
import { ApolloGateway, IntrospectAndCompose, type SupergraphManager } from '@apollo/gateway';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import type { GraphQLResponse } from './gateway.js';

export { ApolloGateway, IntrospectAndCompose };
export { listen, type Listening } from './listen.js';

/** A subgraph that only references update sessions by id; it cannot resolve them itself. */
export const DEPLOYMENTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])

  type Query {
    deployments: [Deployment!]!
  }

  type Deployment {
    id: ID!
    session: UpdateSession
  }

  type UpdateSession @key(fields: "id", resolvable: false) {
    id: ID!
  }
`;

export interface Deployment {
  readonly id: string;
  readonly sessionId: string | null;
}

export function deploymentsSubgraph(deployments: readonly Deployment[]) {
  const schema = buildSubgraphSchema({
    typeDefs: parse(DEPLOYMENTS_SDL),
    resolvers: {
      Query: { deployments: () => deployments },
      Deployment: {
        session: (deployment: Deployment) =>
          deployment.sessionId === null ? null : { __typename: 'UpdateSession', id: deployment.sessionId },
      },
    },
  });
  return createYoga({ schema, graphqlEndpoint: '/graphql', logging: false, landingPage: false });
}

export const quiet = { debug() {}, info() {}, warn() {}, error() {} };

type Executor = Awaited<ReturnType<ApolloGateway['load']>>['executor'];
type RequestContext = Parameters<Executor>[0];

export interface FederatedGateway {
  /** `context` is what the router's server would build from the incoming request. */
  execute<TData = any>(
    query: string,
    variables?: Record<string, unknown>,
    context?: Record<string, unknown>,
  ): Promise<GraphQLResponse<TData>>;
  stop(): Promise<void>;
}

/** Loads an ApolloGateway from a supergraph (or a supergraph manager such as IntrospectAndCompose). */
export async function startApolloGateway(supergraph: string | SupergraphManager): Promise<FederatedGateway> {
  return driveApolloGateway(new ApolloGateway({ supergraphSdl: supergraph, logger: quiet }));
}

/** Loads a configured ApolloGateway and runs operations through its executor. */
export async function driveApolloGateway(gateway: ApolloGateway): Promise<FederatedGateway> {
  const { executor } = await gateway.load();
  return {
    async execute(query, variables = {}, context = {}) {
      // The part of Apollo Server's request context the gateway reads.
      const requestContext = {
        request: { query, variables },
        document: parse(query),
        source: query,
        queryHash: createHash('sha256').update(query).digest('hex'),
        operationName: null,
        context,
        logger: quiet,
        metrics: {},
        cache: undefined,
        overallCachePolicy: undefined,
      } as unknown as RequestContext;
      return (await executor(requestContext)) as GraphQLResponse;
    },
    stop: () => gateway.stop(),
  };
}
