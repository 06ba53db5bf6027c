/**
 * `@stream(initialCount:)` below 0, or null, trips an invariant of the executor ("initialCount must
 * be a positive integer"): an INTERNAL_SERVER_ERROR for the field. A literal is refused by
 * validation, as graphql 17 does; a variable, once its value is known and before anything
 * executes, is the caller's mistake: BAD_USER_INPUT.
 */
import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  Kind,
  visit,
  type ASTNode,
  type ASTVisitor,
  type DirectiveNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

const MUST = '@stream initialCount must be 0 or more';

const initialCountOf = (directive: DirectiveNode) =>
  // Stryker disable next-line OptionalChaining: the parser gives every directive an arguments array
  directive.name.value === 'stream' ? directive.arguments?.find((arg) => arg.name.value === 'initialCount')?.value : undefined;

export function streamInitialCountRule(context: ValidationContext): ASTVisitor {
  return {
    Directive(node) {
      const count = initialCountOf(node);
      if (count?.kind === Kind.NULL || (count?.kind === Kind.INT && Number(count.value) < 0)) {
        const found = count.kind === Kind.NULL ? 'null' : count.value;
        context.reportError(new GraphQLError(`${MUST}, found ${found}.`, { nodes: count }));
      }
    },
  };
}

/** Yoga hands out one parsed document per query text: each operation is walked once. */
const countVariablesByOperation = new WeakMap<OperationDefinitionNode, readonly string[]>();

/** The variables that give an initialCount in the operation, through the fragments it spreads. */
function initialCountVariables(document: DocumentNode, operation: OperationDefinitionNode): readonly string[] {
  let names = countVariablesByOperation.get(operation);
  // Stryker disable next-line ConditionalExpression: the cache only saves walking the operation again
  if (names) return names;
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  const found = new Set<string>();
  const spread = new Set<string>();
  const pending: ASTNode[] = [operation];
  for (let node = pending.pop(); node; node = pending.pop()) {
    visit(node, {
      Directive(directive) {
        const count = initialCountOf(directive);
        if (count?.kind === Kind.VARIABLE) found.add(count.name.value);
      },
      FragmentSpread({ name: { value: name } }) {
        const fragment = fragments.get(name);
        // Stryker disable next-line ConditionalExpression,LogicalOperator,BooleanLiteral: a fragment walked again finds the same variables, and validation has refused unknown fragments and cycles
        if (fragment && !spread.has(name)) pending.push(fragment);
        spread.add(name);
      },
    });
  }
  countVariablesByOperation.set(operation, (names = [...found]));
  return names;
}

/** The refusal of an initialCount variable below 0 or null, if the operation has one. */
function refusal(args: ExecutionArgs): ExecutionResult | undefined {
  const operation = getOperationAST(args.document, args.operationName);
  // Stryker disable next-line ConditionalExpression: Yoga answers an operation it cannot determine before execution
  if (!operation) return undefined;
  const names = initialCountVariables(args.document, operation);
  // Stryker disable next-line ConditionalExpression: without count variables nothing is coerced and nothing refused
  if (names.length === 0) return undefined;
  // Stryker disable next-line ArrayDeclaration: the parser gives every operation a variableDefinitions array
  const definitions = (operation.variableDefinitions ?? []).filter((d) => names.includes(d.variable.name.value));
  // Coerced as execution will coerce them (defaults applied); variables that do not coerce are reported by execution.
  // Stryker disable next-line ObjectLiteral: coercion stops at the first error or not, `coerced` is undefined either way
  const { coerced } = getVariableValues(args.schema, definitions, args.variableValues ?? {}, { maxErrors: 1 });
  if (!coerced) return undefined;
  const errors = names
    // Stryker disable next-line ConditionalExpression: an Int variable coerces to a number, null or nothing
    .filter((name) => coerced[name] === null || (typeof coerced[name] === 'number' && coerced[name] < 0))
    .map(
      (name) =>
        new GraphQLError(`Variable "$${name}" got invalid value ${String(coerced[name])}; ${MUST}.`, {
          extensions: { code: 'BAD_USER_INPUT' },
        }),
    );
  return errors.length > 0 ? { errors } : undefined;
}

export function useStreamInitialCount(): Plugin {
  return {
    onValidate: ({ addValidationRule }) => addValidationRule(streamInitialCountRule),
    onExecute({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      // Stryker disable next-line ConditionalExpression: with an undefined result Yoga goes on as usual
      if (refused) setResultAndStopExecution(refused);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = refusal(args);
      // Stryker disable next-line ConditionalExpression: with an undefined result Yoga goes on as usual
      if (refused) setResultAndStopExecution(refused);
    },
  };
}
