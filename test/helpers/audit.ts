/** Shared queries and paging walks for the auditEvents tests. */
import { expect } from 'vitest';
import type { AuditEventFilter as SimulatorFilter, AuditRecordData } from '../../simulator/index.js';
import type { GraphQLResponse, TestGateway } from './gateway.js';

export const HOUR = 60 * 60 * 1000;

/** Every field of every union member. */
export const RECORD_FIELDS = /* GraphQL */ `
  __typename
  ... on AuditRecord {
    uuid baseType timestamp organizationId tenantId
    actor { id userName domain uuid }
    clientId deviceId workspaceId sourceIp objectType objectId objectName objectAction values
  }
  ... on LoginEvent { success authMethods deviceType actorExternalId failureMessage }
  ... on LaunchEvent { success failureMessage resourceType }
  ... on LoginErrorEvent { failureMessage }
  ... on LaunchErrorEvent { failureMessage }
`;

export const PAGE_QUERY = /* GraphQL */ `
  query AuditPage($first: Int, $last: Int, $after: String, $before: String, $filter: AuditEventFilter) {
    auditEvents(first: $first, last: $last, after: $after, before: $before, filter: $filter) {
      window { from to }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { cursor node { ${RECORD_FIELDS} } }
    }
  }
`;

/** Only what paging needs: cheap enough for long walks. */
export const UUID_PAGE_QUERY = /* GraphQL */ `
  query AuditUuids($first: Int, $last: Int, $after: String, $before: String, $filter: AuditEventFilter) {
    auditEvents(first: $first, last: $last, after: $after, before: $before, filter: $filter) {
      window { from to }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { cursor node { ... on AuditRecord { uuid } } }
    }
  }
`;

export interface GqlFilter {
  from?: string;
  to?: string;
  objectType?: string;
  action?: 'CREATE' | 'UPDATE' | 'DELETE' | 'LINK' | 'UNLINK';
}

export interface Page {
  window: { from: string; to: string };
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { cursor: string; node: Record<string, any> }[];
}

export interface PageArgs {
  first?: number;
  last?: number;
  after?: string | null;
  before?: string | null;
  filter?: GqlFilter;
}

export async function fetchPage(gw: TestGateway, args: PageArgs, query = UUID_PAGE_QUERY): Promise<Page> {
  const response: GraphQLResponse<{ auditEvents: Page }> = await gw.execute(query, { ...args });
  if (response.errors?.length || !response.data) {
    throw new Error(`auditEvents failed: ${JSON.stringify(response.errors)}`);
  }
  return response.data.auditEvents;
}

/** The simulator's ground truth for a gateway filter over an explicit window. */
export function groundTruth(gw: TestGateway, window: { from: string; to: string }, filter: GqlFilter = {}): AuditRecordData[] {
  const query: SimulatorFilter = {
    fromMillis: Date.parse(window.from),
    toMillis: Date.parse(window.to),
    objectType: filter.objectType,
    action: filter.action ? upstreamAction(filter.action) : undefined,
  };
  return gw.sim.control.events(query);
}

/**
 * `filter`'s window walked in full 5000-row pages, each page's hasNextPage checked against the
 * simulator's ground truth: the uuids seen, and the truth's.
 */
export async function walkInFullPages(gw: TestGateway, filter: GqlFilter & { from: string; to: string }) {
  const truth = groundTruth(gw, filter).map((r) => r.uuid);
  const seen: string[] = [];
  let page = await fetchPage(gw, { first: 5000, filter });
  for (;;) {
    seen.push(...page.edges.map((e) => e.node['uuid'] as string));
    expect(page.pageInfo.hasNextPage).toBe(seen.length < truth.length);
    if (!page.pageInfo.hasNextPage) return { seen, truth };
    expect(page.edges).toHaveLength(5000);
    page = await fetchPage(gw, { first: 5000, after: page.pageInfo.endCursor });
  }
}

export const upstreamAction = (action: string) => action.charAt(0) + action.slice(1).toLowerCase();

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
