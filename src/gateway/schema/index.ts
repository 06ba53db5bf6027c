/** Imports every domain, then builds the schema. */
import { printSubgraphSchema } from '@apollo/subgraph';
import { builder } from './builder.js';
import './audit-events.js';
import './update-sessions.js';
import { guardEntities } from './compat/entities.js';
import './live-audit.js';

export const schema = guardEntities(
  builder.toSubGraphSchema({
    linkUrl: 'https://specs.apollo.dev/federation/v2.6',
    federationDirectives: ['@key', '@shareable'],
  }),
);

/** The Federation v2 subgraph SDL `_service { sdl }` serves, `@link` and `@key` kept, for composition tools. */
export const subgraphSdl = () => `${printSubgraphSchema(schema).trimEnd()}\n`;
