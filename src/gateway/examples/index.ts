/** Ready-to-run operations: GraphiQL opens on them as tabs, the README shows them, tests run each one. */

export interface ExampleOperation {
  readonly name: string;
  readonly query: string;
  readonly variables?: Record<string, unknown>;
}

export const SESSION_ID_PLACEHOLDER = '<an update session id of your content library>';

const auditEventExamples: readonly ExampleOperation[] = [
  {
    name: 'Recent logins with their methods',
    query: /* GraphQL */ `
# The newest logins of the last 72 hours. Pass pageInfo.endCursor as $after for the next page:
# the window stays pinned, so new logins never shift the pages.
query RecentLogins($first: Int = 25, $after: String) {
  auditEvents(first: $first, after: $after, filter: { objectType: "LOGIN" }) {
    window { from to }
    pageInfo { hasNextPage endCursor }
    edges {
      node { ... on LoginEvent { uuid timestamp actor { userName domain } success authMethods deviceType sourceIp } }
    }
  }
}`,
    variables: { first: 25 },
  },
  {
    name: 'Failed logins in a window',
    query: /* GraphQL */ `
# Logins and login errors of one window (the last 72 hours unless $from/$to say otherwise).
query FailedLogins($from: DateTime, $to: DateTime) {
  logins: auditEvents(first: 200, filter: { objectType: "LOGIN", from: $from, to: $to }) {
    edges { node { ... on LoginEvent { uuid timestamp success failureMessage actor { userName domain } sourceIp } } }
  }
  loginErrors: auditEvents(first: 50, filter: { objectType: "LOGIN_ERROR", from: $from, to: $to }) {
    edges { node { ... on LoginErrorEvent { uuid timestamp failureMessage sourceIp } } }
  }
}`,
    variables: {},
  },
  {
    name: 'Group changes by action',
    query: /* GraphQL */ `
query GroupUpdates($action: AuditAction = UPDATE, $first: Int = 20) {
  auditEvents(first: $first, filter: { objectType: "Group", action: $action }) {
    pageInfo { hasNextPage endCursor }
    edges { cursor node { ... on GroupEvent { uuid timestamp objectName objectAction actor { userName domain } values } } }
  }
}`,
    variables: { action: 'UPDATE', first: 20 },
  },
];

const updateSessionFiles = /* GraphQL */ `
# Every field of every file. The failed file's errorMessage nests three messages deep (l > l > l).
query UpdateSessionFiles($id: ID!) {
  updateSessionFiles(updateSessionId: $id) {
    name sourceType upstreamSourceType status size bytesTransferred keepInStorage
    checksumInfo { algorithm checksum }
    sourceEndpoint { ...Endpoint }
    uploadEndpoint { ...Endpoint }
    errorMessage {
      id defaultMessage localized args
      params {
        ...Param
        value { l { id params { ...Param value { l { id params { ...Param value { l { id params { ...Param } } } } } } } } }
      }
    }
  }
}
fragment Endpoint on TransferEndpoint { uri scheme sslCertificateThumbprint }
fragment Param on LocalizableMessageParam { key value { dt s d precision format i } }`;

const updateSession = /* GraphQL */ `
# The update session entity, as a federation router resolves it.
query UpdateSession($id: ID!) {
  updateSession(id: $id) { id files { name sourceType status size bytesTransferred checksumInfo { algorithm checksum } } }
}`;

/** ids: a session with files of every kind and one whose files are all ready (demo mode's); without, a placeholder. */
export function exampleOperations(ids?: { withFiles: string; ready: string }): readonly ExampleOperation[] {
  const examples = [
    ...auditEventExamples,
    { name: 'Update session files', query: updateSessionFiles, variables: { id: ids?.withFiles ?? SESSION_ID_PLACEHOLDER } },
    { name: 'Update session entity', query: updateSession, variables: { id: ids?.ready ?? SESSION_ID_PLACEHOLDER } },
    {
      name: 'Live audit records',
      query: /* GraphQL */ `
# New audit records as they happen. Pass the last resumeAfter back as $resumeAfter on a new
# connection to continue right after it, or $since (at most 15 minutes back) to replay first.
subscription LiveAuditRecords($filter: AuditLiveFilter, $since: DateTime, $resumeAfter: String) {
  auditEventAdded(filter: $filter, since: $since, resumeAfter: $resumeAfter) {
    resumeAfter
    node {
      __typename
      ... on AuditRecord { uuid timestamp objectType objectAction objectName actor { userName domain } }
      ... on LoginEvent { success authMethods }
    }
  }
}`,
    },
  ];
  return examples.map((op) => ({ ...op, query: op.query.trim() }));
}
