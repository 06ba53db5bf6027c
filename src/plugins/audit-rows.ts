/**
 * The one expensive thing in this schema is audit rows: each `auditEvents` field reads up to 5000
 * of them upstream, and a 5000-row page holds tens of MB while it is read, executed and serialized.
 * This plugin counts the rows an operation asks for, from `first`/`last` literals and variables
 * alike (a static cost rule sees only literals), and
 * - rejects operations over the budget before anything reaches an upstream;
 * - lets at most `largeOperationConcurrency` operations of more than `largeOperationRows` rows run
 *   at once, from execution until their response (every part of an incremental one) is
 *   serialized; the others wait their turn. This
 *   bounds memory under load whether the rows come from the upstream or from the audit cache.
 */
import {
  getOperationAST,
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import pLimit from 'p-limit';

const DEFAULT_PAGE = 50;

export interface AuditRowLimits {
  readonly maxRows: number;
  readonly largeOperationRows: number;
  readonly largeOperationConcurrency: number;
}

function pageSize(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (!value) return 0;
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) {
    const given = variables[value.name.value];
    return typeof given === 'number' ? given : 0;
  }
  return 0;
}

function requestedRows(
  selections: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  seen = new Set<string>(),
): number {
  let rows = 0;
  for (const selection of selections.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value !== 'auditEvents') continue;
      const arg = (name: string) => selection.arguments?.find((a) => a.name.value === name)?.value;
      rows += Math.max(pageSize(arg('first'), variables), pageSize(arg('last'), variables)) || DEFAULT_PAGE;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      rows += requestedRows(selection.selectionSet, fragments, variables, seen);
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (fragment) rows += requestedRows(fragment.selectionSet, fragments, variables, seen);
    }
  }
  return rows;
}

function operationRows(document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>) {
  const operation = getOperationAST(document, operationName);
  if (operation?.operation !== 'query') return 0;
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  return requestedRows(operation.selectionSet, fragments, variables);
}

export function useAuditRowLimits(limits: AuditRowLimits): Plugin<{ request: Request }> {
  const slots = pLimit(limits.largeOperationConcurrency);
  /** Frees the slot of a large operation once its response is serialized. */
  const releases = new WeakMap<Request, () => void>();
  /** Resolves once a slot is free, with the function that frees it again. */
  const takeSlot = () => new Promise<() => void>((granted) => void slots(() => new Promise<void>((free) => granted(free))));

  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const rows = operationRows(args.document as DocumentNode, args.operationName, args.variableValues ?? {});
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
      releases.set(request, await takeSlot());
      return {
        // An incremental (@defer/@stream) result is still executing when its response starts:
        // the slot is freed when the last part is out, or when the client goes away.
        onExecuteDone: ({ result }) => {
          if (!isAsyncIterable(result)) return;
          const release = releases.get(request);
          releases.delete(request);
          request.signal.addEventListener('abort', () => release?.(), { once: true });
          return { onEnd: () => release?.() };
        },
      };
    },
    onResponse({ request }) {
      releases.get(request)?.();
      releases.delete(request);
    },
  };
}
