/** Ready-to-run auditEvents operations (GraphiQL tabs, README, and a test runs each one). */
import type { ExampleOperation } from './example-operation.js';

export const auditEventExamples: readonly ExampleOperation[] = [
  {
    name: 'Recent logins with their methods',
    query: /* GraphQL */ `
      # A dashboard page: the newest logins of the last 72 hours. Pass pageInfo.endCursor as $after
      # for the next page; the window stays pinned, so new logins never shift the pages.
      query RecentLogins($first: Int = 25, $after: String) {
        auditEvents(first: $first, after: $after, filter: { objectType: "LOGIN" }) {
          window { from to }
          pageInfo { hasNextPage endCursor }
          edges {
            node {
              ... on LoginEvent {
                uuid
                timestamp
                actor { userName domain }
                success
                authMethods
                deviceType
                sourceIp
              }
            }
          }
        }
      }
    `,
    variables: { first: 25 },
  },
  {
    name: 'Failed logins in a window',
    query: /* GraphQL */ `
      # Logins and login errors of one time window (both ends included; \`to\` defaults to now).
      # Keep the LoginEvents whose success is false: they carry the failure reason.
      query FailedLogins($from: DateTime, $to: DateTime) {
        logins: auditEvents(first: 200, filter: { objectType: "LOGIN", from: $from, to: $to }) {
          window { from to }
          pageInfo { hasNextPage endCursor }
          edges {
            node {
              ... on LoginEvent { uuid timestamp success failureMessage actor { userName domain } sourceIp }
            }
          }
        }
        loginErrors: auditEvents(first: 50, filter: { objectType: "LOGIN_ERROR", from: $from, to: $to }) {
          edges {
            node {
              ... on LoginErrorEvent { uuid timestamp failureMessage sourceIp }
            }
          }
        }
      }
    `,
    // No window given: the default 72 hours up to now. Set from/to (ISO 8601) to look elsewhere.
    variables: {},
  },
  {
    name: 'Group changes by action',
    query: /* GraphQL */ `
      # Audit records carry objectAction; the action filter narrows the types that take one.
      query GroupUpdates($action: AuditAction = UPDATE, $first: Int = 20) {
        auditEvents(first: $first, filter: { objectType: "Group", action: $action }) {
          pageInfo { hasNextPage endCursor }
          edges {
            cursor
            node {
              ... on GroupEvent {
                uuid
                timestamp
                objectName
                objectAction
                actor { userName domain }
                values
              }
            }
          }
        }
      }
    `,
    variables: { action: 'UPDATE', first: 20 },
  },
];
