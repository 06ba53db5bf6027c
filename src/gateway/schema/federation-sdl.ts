/**
 * The gateway's schema as a Federation v2 subgraph SDL: the same text `_service { sdl }` serves,
 * with `@link` and `@key` kept (printSchema would drop them). Composition tools (rover, Hive,
 * @theguild/federation-composition) read this; schema/schema.graphql stays the public API.
 */
import { printSubgraphSchema } from '@apollo/subgraph';
import { schema } from './index.js';

export function subgraphSdl(): string {
  return `${printSubgraphSchema(schema).trimEnd()}\n`;
}
