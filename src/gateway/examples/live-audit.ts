/** Ready-to-run live audit subscription (a GraphiQL tab; a test runs it over SSE). */
import type { ExampleOperation } from './example-operation.js';

export const liveAuditExamples: readonly ExampleOperation[] = [
  {
    name: 'Live audit records',
    query: /* GraphQL */ `
      # New audit records as they happen (the demo simulator adds one every few seconds).
      # Keep the last resumeAfter: passed back as $resumeAfter on a new connection, the stream
      # continues right after that record. Or pass $since (at most 15 minutes back) to replay first.
      subscription LiveAuditRecords($filter: AuditLiveFilter, $since: DateTime, $resumeAfter: String) {
        auditEventAdded(filter: $filter, since: $since, resumeAfter: $resumeAfter) {
          resumeAfter
          node {
            __typename
            ... on AuditRecord {
              uuid
              timestamp
              objectType
              objectAction
              objectName
              actor { userName domain }
            }
            ... on LoginEvent { success authMethods }
          }
        }
      }
    `,
  },
];
