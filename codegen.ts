/**
 * `npm run codegen`: writes the schema artefacts from the Pothos code.
 * - schema/schema.graphql: the public API (what clients and the contract check read);
 * - schema/subgraph.graphql: the Federation v2 subgraph SDL a router composes.
 * CI regenerates both and fails when the committed files differ.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './src/schema/index.js';
import { subgraphSdl } from './src/schema/federation-sdl.js';

const config: CodegenConfig = {
  schema: printSchema(lexicographicSortSchema(schema)),
  generates: {
    'schema/schema.graphql': {
      plugins: ['schema-ast'],
      config: { includeDirectives: false, commentDescriptions: false, sort: true },
    },
    'schema/subgraph.graphql': {
      plugins: [{ add: { content: subgraphSdl() } }],
    },
  },
  silent: true,
};

export default config;
