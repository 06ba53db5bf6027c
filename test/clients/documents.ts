/** The operations of operations.graphql as typed documents, one operation (and its fragments) each. */
import { readFileSync } from 'node:fs';
import type { TypedDocumentNode } from '@apollo/client';
import { Kind, parse, type DocumentNode } from 'graphql';
import type {
  AuditPageQuery,
  AuditPageQueryVariables,
  StreamedAuditPageQuery,
  StreamedAuditPageQueryVariables,
} from './generated/operations.js';

export const operationsSource = readFileSync(new URL('./operations.graphql', import.meta.url), 'utf8');
const parsed = parse(operationsSource);

function operation<TResult, TVariables>(name: string): TypedDocumentNode<TResult, TVariables> {
  const definitions = parsed.definitions.filter(
    (d) => d.kind === Kind.FRAGMENT_DEFINITION || (d.kind === Kind.OPERATION_DEFINITION && d.name?.value === name),
  );
  return { ...parsed, definitions } as DocumentNode as TypedDocumentNode<TResult, TVariables>;
}

export const AuditPageDocument = operation<AuditPageQuery, AuditPageQueryVariables>('AuditPage');
export const StreamedAuditPageDocument = operation<StreamedAuditPageQuery, StreamedAuditPageQueryVariables>(
  'StreamedAuditPage',
);
