/**
 * The one expensive thing in this schema is audit rows: each `auditEvents` field reads up to 5000
 * of them upstream, and a 5000-row page holds tens of MB while it is read, executed and serialized.
 * This plugin counts the rows an operation asks for, from `first`/`last` literals, variables and
 * variable defaults alike, through fragments too (a static cost rule sees only literals), and
 * - rejects operations over the budget before anything reaches an upstream;
 * - lets at most `largeOperationConcurrency` operations of more than `largeOperationRows` rows run
 *   at once, from execution until their response (every part of an incremental one) is
 *   serialized; the others wait their turn. This
 *   bounds memory under load whether the rows come from the upstream or from the audit cache.
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
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import pLimit from 'p-limit';
import { DEFAULT_PAGE_SIZE } from '../schema/audit/paging-limits.js';

export interface AuditRowLimits {
  readonly maxRows: number;
  readonly largeOperationRows: number;
  readonly largeOperationConcurrency: number;
}

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

function collectSites(
  selections: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  sites: PageSite[],
  seen = new Set<string>(),
): void {
  for (const selection of selections.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value !== 'auditEvents') continue;
      // Stryker disable next-line OptionalChaining: graphql-js parses every field with an arguments array
      const arg = (name: string) => selection.arguments?.find((a) => a.name.value === name)?.value;
      sites.push({ key: selection.alias?.value ?? selection.name.value, first: arg('first'), last: arg('last') });
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

/** Where an operation asks for rows, and the variables those page sizes read. */
interface PageSites {
  readonly sites: readonly PageSite[];
  readonly sizeVariables: readonly VariableDefinitionNode[];
}

/** Yoga hands out one parsed document per query text: each operation is walked once. */
const sitesByOperation = new WeakMap<OperationDefinitionNode, PageSites>();

function pageSites(document: DocumentNode, operation: OperationDefinitionNode): PageSites {
  let found = sitesByOperation.get(operation);
  // Stryker disable next-line ConditionalExpression: walking the operation again finds the same sites; the cache only saves the walk
  if (!found) {
    const fragments = new Map(
      document.definitions
        .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
        .map((f) => [f.name.value, f]),
    );
    const sites: PageSite[] = [];
    collectSites(operation.selectionSet, fragments, sites);
    const sizeNames = new Set(sites.flatMap(({ first, last }) => [variableOf(first), variableOf(last)]));
    // Stryker disable next-line ArrayDeclaration: graphql-js parses every operation with a variable list
    const sizeVariables = (operation.variableDefinitions ?? []).filter((definition) => sizeNames.has(definition.variable.name.value));
    sitesByOperation.set(operation, (found = { sites, sizeVariables }));
  }
  return found;
}

export function operationRows(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): number {
  const operation = getOperationAST(document, operationName);
  // Stryker disable next-line OptionalChaining: only validated documents with an operation execute
  if (operation?.operation !== 'query') return 0;
  const { sites, sizeVariables } = pageSites(document, operation);
  // Stryker disable next-line ConditionalExpression: without sites the sum below is 0 too; this only skips coercing the variables
  if (sites.length === 0) return 0;
  // Coerced as execution will coerce them, so `$n: Int = 5000` without variables counts 5000; only
  // the page sizes' variables, as the others (a DateTime, a filter) count no rows.
  // Variables that do not coerce fail execution before any resolver runs.
  // Stryker disable next-line ObjectLiteral: only whether errors came matters
  const coerced = getVariableValues(schema, sizeVariables, rawVariables ?? {}, { maxErrors: 1 });
  if (coerced.errors) return 0;
  // Fields of one response key are merged by execution (validation makes their arguments
  // equal), so the same key reached twice, through fragments say, runs once.
  const rowsByKey = new Map<string, number>();
  for (const { key, first, last } of sites) {
    const rows = Math.max(pageSize(first, coerced.coerced), pageSize(last, coerced.coerced)) || DEFAULT_PAGE_SIZE;
    rowsByKey.set(key, Math.max(rows, rowsByKey.get(key) ?? 0));
  }
  let rows = 0;
  for (const count of rowsByKey.values()) rows += count;
  return rows;
}

export function useAuditRowLimits(limits: AuditRowLimits): Plugin<{ request: Request }> {
  const slots = pLimit(limits.largeOperationConcurrency);
  /** Frees the slot of a large operation once its response is serialized. */
  const releases = new WeakMap<Request, () => void>();
  /** Resolves once a slot is free, with the function that frees it again. */
  const takeSlot = () => new Promise<() => void>((granted) => void slots(() => new Promise<void>((free) => granted(free))));

  return {
    // Synchronous unless the operation waits for a slot: most operations pay no extra tick.
    onExecute({ args, setResultAndStopExecution }) {
      const rows = operationRows(
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
      if (rows <= limits.largeOperationRows) return;
      const request = args.contextValue.request;
      return takeSlot().then((release) => {
        releases.set(request, release);
        return {
          // An incremental (@defer/@stream) result is still executing when its response starts:
          // the slot is freed when the last part is out, or when the client goes away.
          onExecuteDone: ({ result }) => {
            if (!isAsyncIterable(result)) return;
            releases.delete(request);
            // Stryker disable next-line ObjectLiteral,BooleanLiteral: the release resolves a promise; a second call does nothing
            request.signal.addEventListener('abort', release, { once: true });
            return { onEnd: release };
          },
        };
      });
    },
    onResponse({ request }) {
      releases.get(request)?.();
      releases.delete(request);
    },
  };
}
