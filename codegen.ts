/**
 * `npm run codegen`: writes the schema artefacts from the Pothos code.
 * - schema/schema.graphql: the client schema (no federation internals; what clients, their codegen
 *   and the contract check read);
 * - schema/possible-types.json: `{ possibleTypes }` for every union and interface, as Apollo
 *   Client's InMemoryCache and urql's graphcache take it;
 * - schema/introspection.json: the client schema as an introspection result (no descriptions), what
 *   urql's graphcache takes as `schema`;
 * - schema/subgraph.graphql: the Federation v2 subgraph SDL a router composes.
 * CI regenerates them and fails when the committed files differ.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';
import { introspectionFromSchema, printSchema } from 'graphql';
import { clientSchemaOf } from './codegen/client-schema.js';
import { schema, subgraphSdl } from './src/gateway/schema/index.js';

const clientSchema = clientSchemaOf(schema);

const config: CodegenConfig = {
  schema: printSchema(clientSchema),
  generates: {
    'schema/schema.graphql': {
      plugins: ['schema-ast'],
      config: { includeDirectives: false, commentDescriptions: false, sort: true },
    },
    'schema/possible-types.json': {
      plugins: ['fragment-matcher'],
      config: { apolloClientVersion: 3 },
    },
    'schema/introspection.json': {
      plugins: [{ add: { content: `${JSON.stringify(introspectionFromSchema(clientSchema, { descriptions: false }), null, 2)}\n` } }],
    },
    'schema/subgraph.graphql': {
      plugins: [{ add: { content: subgraphSdl() } }],
    },
  },
  silent: true,
};

export default config;
