/** What the limits and the executor read of an operation, one walk per document; per request only variables are coerced. */
import {
  getOperationAST,
  getVariableValues,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';

const SESSION_FIELDS = new Set(['_entities', 'updateSessionFiles', 'updateSession']);
const COMPILED_ROOT_FIELDS = new Set(['auditEvents', '__typename']);

type OperationAnalysis = ReturnType<typeof analyse>;

const analyses = new WeakMap<OperationDefinitionNode, OperationAnalysis>();

export const fragmentsOf = (document: DocumentNode) =>
  new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));

function analyse(document: DocumentNode, operation: OperationDefinitionNode) {
  const fragments = fragmentsOf(document);
  const pages: { key: string; first: ValueNode | undefined; last: ValueNode | undefined }[] = [];
  // A root field that looks up update sessions: one per `_entities` representation, else one.
  const sessions: { key: string; representations: ValueNode | undefined }[] = [];
  const initialCountVariables = new Set<string>();
  let incremental = false;
  // A fragment spread at the root is walked there, for its sites; below, once in all.
  const walkedAtRoot = new Set<string>();
  const walkedBelow = new Set<string>();

  const walk = (selectionSet: SelectionSetNode, atRoot: boolean): void => {
    for (const selection of selectionSet.selections) {
      for (const directive of selection.directives ?? []) {
        if (directive.name.value !== 'defer' && directive.name.value !== 'stream') continue;
        incremental = true;
        const count = directive.arguments?.find((arg) => arg.name.value === 'initialCount')?.value;
        if (count?.kind === Kind.VARIABLE) initialCountVariables.add(count.name.value);
      }
      if (selection.kind === Kind.FIELD) {
        if (atRoot) {
          const name = selection.name.value;
          const key = selection.alias?.value ?? name;
          const arg = (argName: string) => selection.arguments?.find((a) => a.name.value === argName)?.value;
          if (name === 'auditEvents') pages.push({ key, first: arg('first'), last: arg('last') });
          else if (SESSION_FIELDS.has(name)) sessions.push({ key, representations: arg('representations') });
        }
        if (selection.selectionSet) walk(selection.selectionSet, false);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, atRoot);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || walkedAtRoot.has(name) || (!atRoot && walkedBelow.has(name))) continue;
        (atRoot ? walkedAtRoot : walkedBelow).add(name);
        walk(fragment.selectionSet, atRoot);
      }
    }
  };
  walk(operation.selectionSet, true);

  // A query of audit pages alone, without @defer/@stream, which graphql-jit does not know.
  const onlyAuditPages =
    operation.operation === 'query' &&
    !incremental &&
    operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && COMPILED_ROOT_FIELDS.has(s.name.value));
  const read = new Set(initialCountVariables);
  for (const { first, last } of pages) for (const size of [first, last]) if (size?.kind === Kind.VARIABLE) read.add(size.name.value);
  const limitVariables = (operation.variableDefinitions ?? []).filter((definition) => read.has(definition.variable.name.value));
  const declaredVariables = new Set(operation.variableDefinitions?.map((definition) => definition.variable.name.value));
  return { operation, pages, sessions, initialCountVariables: [...initialCountVariables], onlyAuditPages, limitVariables, declaredVariables };
}

export function analysisOf(document: DocumentNode, operationName: string | null | undefined): OperationAnalysis | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  let analysis = analyses.get(operation);
  if (!analysis) analyses.set(operation, (analysis = analyse(document, operation)));
  return analysis;
}

type Coercible = Pick<ExecutionArgs, 'schema' | 'variableValues'>;

const coerce = (args: Coercible, definitions: readonly VariableDefinitionNode[]) =>
  getVariableValues(args.schema, definitions, args.variableValues ?? {}, { maxErrors: 1 }).coerced ?? null;

const coercions = new WeakMap<Coercible, Record<string, unknown> | null>();

/** The variables as execution coerces them (defaults applied); null when one does not: execution refuses it itself. */
export function coercedVariables(args: Coercible, analysis: OperationAnalysis): Record<string, unknown> | null {
  let coerced = coercions.get(args);
  if (coerced === undefined) coercions.set(args, (coerced = coerce(args, analysis.operation.variableDefinitions ?? [])));
  return coerced;
}

/** The variables the limits read, coerced: those may coerce while another does not. */
export function limitVariables(args: Coercible, analysis: OperationAnalysis): Record<string, unknown> | null {
  return coercedVariables(args, analysis) ?? coerce(args, analysis.limitVariables);
}
