/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** The action filter; sent to the upstream in its own spelling (Create, Update, ...). */
export type AuditAction =
  /** Object created. */
  | 'CREATE'
  /** Object deleted. */
  | 'DELETE'
  /** Object linked. */
  | 'LINK'
  /** Object unlinked. */
  | 'UNLINK'
  /** Object updated. */
  | 'UPDATE';

/** Which audit records a connection covers. Repeat it (or leave it out) when paging with a cursor. */
export type AuditEventFilter = {
  /** Further filter by action, for the types that take one. */
  action?: AuditAction | null | undefined;
  /** Oldest time included. Default: 72 hours before `to`. */
  from?: string | null | undefined;
  /** Upstream objectType, case-sensitive, e.g. LOGIN, LAUNCH, Group. A known type in another case (login) is BAD_USER_INPUT; other values are passed on as given. */
  objectType?: string | null | undefined;
  /** Newest time included. Default, and upper limit: the time the first page is read. */
  to?: string | null | undefined;
};

type AuditRow_AppEntitlementEvent_Fragment = { __typename: 'AppEntitlementEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null };

type AuditRow_DirectorySyncProfileEvent_Fragment = { __typename: 'DirectorySyncProfileEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null };

type AuditRow_GroupEvent_Fragment = { __typename: 'GroupEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null };

type AuditRow_LaunchErrorEvent_Fragment = { __typename: 'LaunchErrorEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null };

type AuditRow_LaunchEvent_Fragment = { __typename: 'LaunchEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null };

type AuditRow_LoginErrorEvent_Fragment = { __typename: 'LoginErrorEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null };

type AuditRow_LoginEvent_Fragment = { __typename: 'LoginEvent', uuid: string, timestamp: string, objectType: string, success: boolean | null, actor: { userName: string | null } | null };

type AuditRow_OtherAuditEvent_Fragment = { __typename: 'OtherAuditEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null };

export type AuditRowFragment =
  | AuditRow_AppEntitlementEvent_Fragment
  | AuditRow_DirectorySyncProfileEvent_Fragment
  | AuditRow_GroupEvent_Fragment
  | AuditRow_LaunchErrorEvent_Fragment
  | AuditRow_LaunchEvent_Fragment
  | AuditRow_LoginErrorEvent_Fragment
  | AuditRow_LoginEvent_Fragment
  | AuditRow_OtherAuditEvent_Fragment
;

export type AuditPageQueryVariables = Exact<{
  first: number;
  after?: string | null | undefined;
  filter?: AuditEventFilter | null | undefined;
}>;


export type AuditPageQuery = { auditEvents: { totalCount: number, pageInfo: { hasNextPage: boolean, endCursor: string | null }, edges: Array<{ cursor: string, node:
        | { __typename: 'AppEntitlementEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'DirectorySyncProfileEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'GroupEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LaunchErrorEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LaunchEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LoginErrorEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LoginEvent', uuid: string, timestamp: string, objectType: string, success: boolean | null, actor: { userName: string | null } | null }
        | { __typename: 'OtherAuditEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
       }> } | null };

export type StreamedAuditPageQueryVariables = Exact<{
  first: number;
  initialCount?: number | null | undefined;
}>;


export type StreamedAuditPageQuery = { auditEvents: { edges: Array<{ cursor: string, node:
        | { __typename: 'AppEntitlementEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'DirectorySyncProfileEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'GroupEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LaunchErrorEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LaunchEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LoginErrorEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
        | { __typename: 'LoginEvent', uuid: string, timestamp: string, objectType: string, success: boolean | null, actor: { userName: string | null } | null }
        | { __typename: 'OtherAuditEvent', uuid: string, timestamp: string, objectType: string, actor: { userName: string | null } | null }
       }> } & ({ pageInfo: { hasNextPage: boolean, endCursor: string | null } } | { pageInfo?: never }) | null };
