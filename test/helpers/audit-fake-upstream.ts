/**
 * An in-memory audit report behind the real per-request loaders: fast enough to check the paging
 * logic on thousands of random cases. Records are positions 0..size-1 (uuid `r<position>`).
 */
import { GraphQLSchema, type GraphQLResolveInfo } from 'graphql';
import { pino } from 'pino';
import type { GatewayContext } from '../../src/gateway/context.js';
import { createLoaders } from '../../src/gateway/loaders.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';
import type { AuditReportQuery, AuditRowResult, IdentityApi } from '../../src/upstream/types.js';

export interface FakeAudit {
  readonly calls: AuditReportQuery[];
  /** Highest number of calls in flight at once. */
  readonly maxInFlight: () => number;
  /** A fresh request context (fresh loaders), as each GraphQL request gets. */
  context(): GatewayContext;
}

export const fakeRecord = (position: number): AuditRecord => ({
  baseType: 'Action',
  uuid: `r${position}`,
  timestamp: 1_700_000_000_000 - position,
  organizationId: 1,
  tenantId: 't',
  actorId: null,
  actorUserName: null,
  actorDomain: null,
  actorUuid: null,
  clientId: null,
  deviceId: null,
  workspaceId: null,
  sourceIp: null,
  objectType: 'LOGIN',
  objectId: null,
  objectName: null,
  objectAction: null,
  values: {},
});

export interface FakeAuditOptions {
  readonly unreadable?: ReadonlySet<number>;
  readonly maxPageSize?: number;
  /** At most this many rows a call (while the window lasts): an upstream whose pages come back shorter than asked. */
  readonly rowsPerCall?: number;
}

export function fakeAudit(size: number, options: FakeAuditOptions = {}): FakeAudit {
  const calls: AuditReportQuery[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const identity: IdentityApi = {
    async auditReport(query) {
      calls.push(query);
      if (query.pageSize < 1 || query.pageSize > (options.maxPageSize ?? 5000) || query.startIndex < 0) {
        throw new Error(`bad upstream query ${JSON.stringify(query)}`);
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 0));
      inFlight--;
      const rows: AuditRowResult[] = [];
      // Never more than asked: the identity client refuses a longer page (test/hardening/hostile-upstream.test.ts).
      const answered = Math.min(options.rowsPerCall ?? query.pageSize, query.pageSize);
      for (let p = query.startIndex; p < Math.min(size, query.startIndex + answered); p++) {
        rows.push(options.unreadable?.has(p) ? { ok: false, reason: 'test' } : { ok: true, record: fakeRecord(p) });
      }
      return { rows };
    },
  };
  return { calls, maxInFlight: () => maxInFlight, context: contextOver(identity) };
}

/** A GraphQL context factory whose audit report is `identity`, logging nowhere. */
export function contextOver(identity: IdentityApi): () => GatewayContext {
  const log = pino({ enabled: false });
  return () =>
    ({
      log,
      caller: { id: 'test' },
      loaders: createLoaders({ identity, contentLibrary: undefined, close: async () => {} }, { log }),
    }) as GatewayContext;
}

export const fakeInfo = {
  path: { prev: undefined, key: 'auditEvents', typename: 'Query' },
  fieldNodes: [],
  // A schema without @stream: no edges are streamed.
  schema: new GraphQLSchema({}),
} as unknown as GraphQLResolveInfo;
