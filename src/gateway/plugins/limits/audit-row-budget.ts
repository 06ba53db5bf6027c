/**
 * The expensive things in this schema are audit rows and update sessions: each `auditEvents` field
 * reads up to 5000 rows upstream, and a 5000-row page holds tens of MB while it is read, executed
 * and serialized; an update session may hold a hundred files or more, each answered as often as the
 * operation names the session (100 `_entities` representations of one large session answer 7 MB).
 * This plugin counts the rows an operation asks for, from `first`/`last` literals, variables and
 * variable defaults alike, through fragments too (a static cost rule sees only literals), and the
 * update sessions it looks up, and
 * - rejects operations over the row budget before anything reaches an upstream;
 * - lets at most `largeOperationConcurrency` large operations (more than `largeOperationRows` rows
 *   or `largeOperationSessions` session lookups) run at once, from execution until their answer
 *   (every part of an incremental one) has left; the others wait their turn, until their deadline
 *   (REQUEST_TIMEOUT_MS) at most. This bounds memory under load whether the data comes from the
 *   upstream or from the audit cache.
 */
import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import type { ServerResponse } from 'node:http';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import pLimit from 'p-limit';
import { DEFAULT_PAGE_SIZE } from '../../../audit/paging/limits.js';
import type { OperationDeadline } from '../../../upstream/deadline.js';

export interface AuditRowLimits {
  readonly maxRows: number;
  readonly largeOperationRows: number;
  readonly largeOperationSessions: number;
  readonly largeOperationConcurrency: number;
  /**
   * A large answer whose client reads nothing for this long loses its connection, and so gives its
   * turn back: a client that stops reading cannot hold a turn, and the answer's memory, for good.
   */
  readonly largeAnswerStallMs: number;
}

/** The Node response under a request served by Node's HTTP server (Yoga's server context); absent under `yoga.fetch`. */
type NodeResponse = Pick<ServerResponse, 'closed' | 'once' | 'setTimeout'>;

/** `variables` are the coerced values: defaults applied, as execution will see them. */
function pageSize(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (!value) return 0;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) {
    const given = variables[value.name.value];
    // Stryker disable next-line ConditionalExpression: a coerced Int is a number, null or absent, and null and absent both end as the default page
    return typeof given === 'number' ? given : 0;
  }
  return 0;
}

/** An `auditEvents` field an operation reaches, under its response key. */
interface PageSite {
  readonly key: string;
  readonly first: ValueNode | undefined;
  readonly last: ValueNode | undefined;
}

/**
 * A field that looks up update sessions, under its response key: `_entities` (one per
 * representation) or `updateSessionFiles` / `updateSession` (one).
 */
interface SessionSite {
  readonly key: string;
  readonly representations: ValueNode | undefined;
}

const SESSION_FIELDS = new Set(['_entities', 'updateSessionFiles', 'updateSession']);

interface Sites {
  readonly pages: PageSite[];
  readonly sessions: SessionSite[];
}

function collectSites(
  selections: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  sites: Sites,
  seen = new Set<string>(),
): void {
  for (const selection of selections.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      // Stryker disable next-line OptionalChaining: graphql-js parses every field with an arguments array
      const arg = (argName: string) => selection.arguments?.find((a) => a.name.value === argName)?.value;
      const key = selection.alias?.value ?? name;
      if (name === 'auditEvents') sites.pages.push({ key, first: arg('first'), last: arg('last') });
      else if (SESSION_FIELDS.has(name)) sites.sessions.push({ key, representations: arg('representations') });
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collectSites(selection.selectionSet, fragments, sites, seen);
    } else {
      // Stryker disable next-line ConditionalExpression: a fragment's sites counted twice change no maximum; validation rules out cycles
      if (seen.has(selection.name.value)) continue;
      seen.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      // Stryker disable next-line ConditionalExpression: only validated documents execute, and they name no unknown fragment
      if (fragment) collectSites(fragment.selectionSet, fragments, sites, seen);
    }
  }
}

const variableOf = (value: ValueNode | undefined) => (value?.kind === Kind.VARIABLE ? value.name.value : undefined);

/** Where an operation asks for rows and looks up sessions, and the variables the page sizes read. */
interface OperationSites extends Sites {
  readonly sizeVariables: readonly VariableDefinitionNode[];
}

/** Yoga hands out one parsed document per query text: each operation is walked once. */
const sitesByOperation = new WeakMap<OperationDefinitionNode, OperationSites>();

function operationSites(document: DocumentNode, operation: OperationDefinitionNode): OperationSites {
  let found = sitesByOperation.get(operation);
  // Stryker disable next-line ConditionalExpression: walking the operation again finds the same sites; the cache only saves the walk
  if (!found) {
    const fragments = new Map(
      document.definitions
        .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
        .map((f) => [f.name.value, f]),
    );
    const sites: Sites = { pages: [], sessions: [] };
    collectSites(operation.selectionSet, fragments, sites);
    const sizeNames = new Set(sites.pages.flatMap(({ first, last }) => [variableOf(first), variableOf(last)]));
    // Stryker disable next-line ArrayDeclaration: graphql-js parses every operation with a variable list
    const sizeVariables = (operation.variableDefinitions ?? []).filter((definition) => sizeNames.has(definition.variable.name.value));
    sitesByOperation.set(operation, (found = { ...sites, sizeVariables }));
  }
  return found;
}

/** What an operation asks for: audit rows, and update session lookups. */
export interface OperationWeight {
  readonly rows: number;
  readonly sessions: number;
}

const NOTHING: OperationWeight = { rows: 0, sessions: 0 };

/** Sums per response key: fields of one key are merged by execution (validation makes their arguments equal). */
function sumByKey<T extends { readonly key: string }>(sites: readonly T[], count: (site: T) => number): number {
  const byKey = new Map<string, number>();
  for (const site of sites) byKey.set(site.key, Math.max(count(site), byKey.get(site.key) ?? 0));
  let sum = 0;
  for (const value of byKey.values()) sum += value;
  return sum;
}

/** Representations in a literal list or a list variable; anything else coerces to a list of one. */
function representationCount(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (value?.kind === Kind.LIST) return value.values.length;
  const given = value?.kind === Kind.VARIABLE ? variables[value.name.value] : undefined;
  return Array.isArray(given) ? given.length : 1;
}

export function operationWeight(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): OperationWeight {
  const operation = getOperationAST(document, operationName);
  // Stryker disable next-line OptionalChaining: only validated documents with an operation execute
  if (operation?.operation !== 'query') return NOTHING;
  const { pages, sessions: sessionSites, sizeVariables } = operationSites(document, operation);
  const variables = rawVariables ?? {};
  const sessions = sumByKey(sessionSites, (site) => representationCount(site.representations, variables));
  // Stryker disable next-line ConditionalExpression: without pages the sum below is 0 too; this only skips coercing the variables
  if (pages.length === 0) return { rows: 0, sessions };
  // Coerced as execution will coerce them, so `$n: Int = 5000` without variables counts 5000; only
  // the page sizes' variables, as the others (a DateTime, a filter) count no rows.
  // Variables that do not coerce fail execution before any resolver runs.
  // Stryker disable next-line ObjectLiteral: only whether errors came matters
  const coerced = getVariableValues(schema, sizeVariables, variables, { maxErrors: 1 });
  if (coerced.errors) return NOTHING;
  const rows = sumByKey(
    pages,
    ({ first, last }) => Math.max(pageSize(first, coerced.coerced), pageSize(last, coerced.coerced)) || DEFAULT_PAGE_SIZE,
  );
  return { rows, sessions };
}

export function useAuditRowLimits(limits: AuditRowLimits): Plugin<{ request: Request; res?: NodeResponse; deadline?: OperationDeadline | undefined }> {
  const slots = pLimit(limits.largeOperationConcurrency);
  /** Frees the slot of a large operation once its response is serialized. */
  const releases = new WeakMap<Request, () => void>();
  /**
   * Resolves once a slot is free, with the function that frees it again; or with undefined once
   * `signal` aborts first, and the turn, when it comes, passes straight on.
   */
  const takeSlot = (signal: AbortSignal | undefined) =>
    new Promise<(() => void) | undefined>((settle) => {
      if (signal?.aborted) return settle(undefined);
      const giveUp = () => settle(undefined);
      signal?.addEventListener('abort', giveUp, { once: true });
      void slots(
        () =>
          new Promise<void>((free) => {
            signal?.removeEventListener('abort', giveUp);
            if (signal?.aborted) free();
            else settle(free);
          }),
      );
    });

  return {
    // Synchronous unless the operation waits for a slot: most operations pay no extra tick.
    onExecute({ args, setResultAndStopExecution }) {
      const { rows, sessions } = operationWeight(
        args.schema,
        args.document as DocumentNode,
        args.operationName,
        args.variableValues as Record<string, unknown> | undefined,
      );
      if (rows > limits.maxRows) {
        setResultAndStopExecution({
          errors: [
            new GraphQLError(
              `The operation asks for ${rows} audit rows; at most ${limits.maxRows} are served per operation. Page through them instead.`,
              { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
            ),
          ],
        });
        return;
      }
      if (rows <= limits.largeOperationRows && sessions <= limits.largeOperationSessions) return;
      const { request, res, deadline } = args.contextValue;
      // The wait ends with the operation's deadline, or when its caller goes away. Past it the
      // operation runs without a slot: every upstream read of a request past its deadline fails at
      // once (src/gateway/loaders.ts), so it holds no rows, and its fields answer UPSTREAM_UNAVAILABLE, timed out.
      return takeSlot(deadline?.signal).then((release) => {
        if (!release) return;
        releases.set(request, release);
        // No Node response to watch (a WebSocket operation, `yoga.fetch`): the turn is given back
        // when the request's signal says the operation is over, its answer sent or its client gone.
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal aborts once; the release resolves a promise, a second call does nothing
        if (!res) request.signal.addEventListener('abort', release, { once: true });
        return {
          // Under `yoga.fetch` no connection tells when an answer is out: an incremental
          // (@defer/@stream) result, still executing when its response starts, frees the slot when
          // its last part is out, or when the client goes away.
          onExecuteDone: ({ result }) => {
            if (res || !isAsyncIterable(result)) return;
            releases.delete(request);
            return { onEnd: release };
          },
        };
      });
    },
    onResponse({ request, serverContext }) {
      const release = releases.get(request);
      if (!release) return;
      releases.delete(request);
      const res = (serverContext as { res?: NodeResponse }).res;
      if (!res) return release();
      // The slot holds until the answer has left, every part of an incremental one included: an
      // answer waiting for a slow reader holds its memory as much as one executing.
      // Once the adapter has started sending: for a streamed body it clears the socket's timeout.
      setImmediate(() => res.closed || res.setTimeout(limits.largeAnswerStallMs));
      if (res.closed) release();
      else res.once('close', release);
    },
  };
}
