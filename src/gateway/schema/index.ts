/** Imports every domain, then builds the schema. Nothing else lives here. */
import { builder } from './builder.js';
import './audit-events.js';
import './update-sessions.js';
import { guardEntities } from './entities.js';
import './live-audit.js';

export const schema = guardEntities(
  builder.toSubGraphSchema({
    linkUrl: 'https://specs.apollo.dev/federation/v2.6',
    federationDirectives: ['@key', '@shareable'],
  }),
);
