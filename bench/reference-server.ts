/**
 * The bench's yardstick: "bare graphql-yoga + graphql-jit, SDL resolvers, undici" answering the
 * bench's audit query (AUDIT_QUERY in scenarios.ts) over the same upstream as the gateway. One
 * client-credentials token fetched at start, the report read over an undici Pool, the envelope and
 * each record JSON.parsed and mapped to the fields the query selects. No auth, metrics, limits,
 * logging or validation: the floor of a GraphQL server of this stack for this query, so the
 * gateway's CPU per request can be compared with it. Self-contained (no import from src/), so it
 * compiles on its own (bench/tsconfig.reference.json).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { createSchema, createYoga } from 'graphql-yoga';
import { GraphQLScalarType, Kind } from 'graphql';
import { Pool, request } from 'undici';

/** The upstream's largest page (it clamps larger ones): a full page learns hasNextPage from a one-row read. */
const UPSTREAM_MAX_PAGE = 5000;

/** The upstream objectType -> union member, as the gateway maps it (src/gateway/schema/audit/record-types.ts). */
const TYPE_NAME_BY_OBJECT_TYPE: ReadonlyMap<string, string> = new Map([
  ['LOGIN', 'LoginEvent'],
  ['LAUNCH', 'LaunchEvent'],
  ['LOGIN_ERROR', 'LoginErrorEvent'],
  ['LAUNCH_ERROR', 'LaunchErrorEvent'],
  ['Group', 'GroupEvent'],
  ['AppEntitlement', 'AppEntitlementEvent'],
  ['DyrectorySyncProfile', 'DirectorySyncProfileEvent'],
  ['DirectorySyncProfile', 'DirectorySyncProfileEvent'],
]);
const FALLBACK_TYPE_NAME = 'OtherAuditEvent';
const UNION_MEMBERS = [...new Set([...TYPE_NAME_BY_OBJECT_TYPE.values(), FALLBACK_TYPE_NAME])];

const RECORD_FIELDS = `
    uuid: ID!
    baseType: AuditBaseType!
    timestamp: DateTime!
    organizationId: SafeInt
    tenantId: String
    actor: AuditActor
    clientId: String
    deviceId: String
    workspaceId: String
    sourceIp: String
    objectType: String!
    objectId: String
    objectName: String
    objectAction: String
    values: JSON!`;

/** The contract's types, cut down to what AUDIT_QUERY selects. */
const typeDefs = /* GraphQL */ `
  scalar DateTime
  scalar SafeInt
  scalar JSON

  type Query {
    auditEvents(first: Int!, filter: AuditEventFilter!): AuditEventConnection!
  }
  input AuditEventFilter {
    from: DateTime!
    to: DateTime!
  }
  type AuditEventConnection {
    window: AuditWindow!
    pageInfo: PageInfo!
    edges: [AuditEventEdge!]!
  }
  type AuditWindow {
    from: DateTime!
    to: DateTime!
  }
  type PageInfo {
    hasNextPage: Boolean!
    endCursor: String
  }
  type AuditEventEdge {
    node: AuditEvent!
  }
  enum AuditBaseType {
    AUDIT
    ACTION
  }
  type AuditActor {
    id: SafeInt
    userName: String
    domain: String
    uuid: String
  }
  interface AuditRecord {${RECORD_FIELDS}
  }
  type LoginEvent implements AuditRecord {${RECORD_FIELDS}
    success: Boolean
    authMethods: [String!]!
  }
${UNION_MEMBERS.filter((name) => name !== 'LoginEvent')
  .map((name) => `  type ${name} implements AuditRecord {${RECORD_FIELDS}\n  }`)
  .join('\n')}
  union AuditEvent = ${UNION_MEMBERS.join(' | ')}
`;

/** A record as the upstream sends it (some fields under two spellings). */
interface UpstreamRecord {
  baseType: string;
  uuid: string;
  timestamp?: number;
  timeStamp?: number;
  organizationId?: number | null;
  tenantId?: string | null;
  actorId?: number | null;
  actorUserName?: string | null;
  actorDomain?: string | null;
  actorUuid?: string | null;
  actorUUid?: string | null;
  clientId?: string | null;
  deviceId?: string | null;
  workspaceId?: string | null;
  sourceIp?: string | null;
  sourceIP?: string | null;
  objectType: string;
  objectId?: string | null;
  objectName?: string | null;
  objectAction?: string | null;
  values?: Record<string, unknown> | null;
}

interface AuditEventsArgs {
  first: number;
  filter: { from: number; to: number };
}

/** ISO-8601 with milliseconds out, epoch milliseconds in. */
const DateTime = new GraphQLScalarType<number, string>({
  name: 'DateTime',
  serialize: (value) => new Date(value as number).toISOString(),
  parseValue: (value) => Date.parse(value as string),
  parseLiteral: (ast) => (ast.kind === Kind.STRING ? Date.parse(ast.value) : Number.NaN),
});

const JSONScalar = new GraphQLScalarType({ name: 'JSON' });
const SafeInt = new GraphQLScalarType({ name: 'SafeInt' });

/** values.success: "true"/"false" or a boolean. */
function success(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  const text = value.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : null;
}

/** values.authMethods split on the commas outside parentheses. */
function authMethods(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  const labels: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i <= value.length; i++) {
    const c = value[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if ((c === ',' && depth === 0) || i === value.length) {
      const label = value.slice(from, i).trim();
      if (label) labels.push(label);
      from = i + 1;
    }
  }
  return labels;
}

/** The selected fields of one record, the union member in `__typename` (read by resolveType). */
function toNode(r: UpstreamRecord) {
  const actorUuid = r.actorUuid ?? r.actorUUid;
  const values = r.values ?? {};
  const typeName = TYPE_NAME_BY_OBJECT_TYPE.get(r.objectType) ?? FALLBACK_TYPE_NAME;
  const login = typeName === 'LoginEvent';
  const system = r.actorId == null && r.actorUserName == null && r.actorDomain == null && actorUuid == null;
  return {
    __typename: typeName,
    uuid: r.uuid,
    baseType: r.baseType,
    timestamp: r.timestamp ?? r.timeStamp,
    organizationId: r.organizationId,
    tenantId: r.tenantId,
    actor: system ? null : { id: r.actorId, userName: r.actorUserName, domain: r.actorDomain, uuid: actorUuid },
    clientId: r.clientId,
    deviceId: r.deviceId,
    workspaceId: r.workspaceId,
    sourceIp: r.sourceIp ?? r.sourceIP,
    objectType: r.objectType,
    objectId: r.objectId,
    objectName: r.objectName,
    objectAction: r.objectAction,
    values,
    // One object shape for every member (LoginEvent's fields unset elsewhere) keeps property reads monomorphic.
    success: login ? success(values['success']) : null,
    authMethods: login ? authMethods(values['authMethods']) : null,
  };
}

export interface ReferenceOptions {
  /** The identity service (the simulator) base URL. */
  readonly identityUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly host?: string;
  /** 0 (default): any free port. */
  readonly port?: number;
}

export interface ReferenceServer {
  readonly url: string;
  close(): Promise<void>;
}

async function fetchToken(options: ReferenceOptions): Promise<string> {
  const res = await request(new URL('/SAAS/auth/oauthtoken', options.identityUrl), {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const answer = (await res.body.json()) as { access_token?: string };
  if (res.statusCode !== 200 || !answer.access_token) throw new Error(`token request answered ${res.statusCode}`);
  return answer.access_token;
}

/** The report's rows for [startIndex, startIndex + pageSize), each record JSON.parsed. */
async function readRecords(pool: Pool, token: string, filter: AuditEventsArgs['filter'], startIndex: number, pageSize: number) {
  const res = await pool.request({
    method: 'GET',
    path: `/analytics/reports/audit/?pageSize=${pageSize}&startIndex=${startIndex}&fromMillis=${filter.from}&toMillis=${filter.to}`,
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`audit report answered ${res.statusCode}`);
  const rows = (JSON.parse(text) as { data: unknown[][] }).data;
  const records = new Array<UpstreamRecord>(rows.length);
  for (let i = 0; i < rows.length; i++) records[i] = JSON.parse(rows[i]![4] as string) as UpstreamRecord;
  return records;
}

/** Yoga + jit over an undici Pool, listening; the token is fetched before it answers anything. */
export async function startReferenceServer(options: ReferenceOptions): Promise<ReferenceServer> {
  const token = await fetchToken(options);
  const pool = new Pool(new URL(options.identityUrl).origin, { connections: 32, keepAliveTimeout: 10_000 });

  const auditEvents = async (_: unknown, { first, filter }: AuditEventsArgs) => {
    // first + 1 rows tell whether another page follows; past the upstream's largest page, one more row is read.
    const wanted = Math.min(first + 1, UPSTREAM_MAX_PAGE);
    const [records, next] = await Promise.all([
      readRecords(pool, token, filter, 0, wanted),
      wanted <= first ? readRecords(pool, token, filter, first, 1) : undefined,
    ]);
    const page = records.length > first ? records.slice(0, first) : records;
    return {
      window: filter,
      pageInfo: { hasNextPage: records.length > first || (next?.length ?? 0) > 0, endCursor: page.length ? String(page.length - 1) : null },
      edges: page.map((record) => ({ node: toNode(record) })),
    };
  };

  const schema = createSchema({
    typeDefs,
    resolvers: {
      DateTime,
      SafeInt,
      JSON: JSONScalar,
      AuditBaseType: { AUDIT: 'Audit', ACTION: 'Action' },
      Query: { auditEvents },
      AuditEvent: { __resolveType: (node: { __typename: string }) => node.__typename },
      AuditRecord: { __resolveType: (node: { __typename: string }) => node.__typename },
    },
  });
  const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', graphiql: false, landingPage: false, logging: false, plugins: [useGraphQlJit()] });
  const server: Server = createServer(yoga);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.close();
    },
  };
}
