/** `@stream(initialCount:)` below 0 or null breaks the executor: refused by validation, a variable's before execution. */
import { GraphQLError, Kind, type ASTVisitor, type ExecutionArgs, type ExecutionResult, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { analysisOf, limitVariables } from './document-analysis.js';

const MUST = '@stream initialCount must be 0 or more';

function streamInitialCountRule(context: ValidationContext): ASTVisitor {
  return {
    Directive(node) {
      if (node.name.value !== 'stream') return;
      const count = node.arguments?.find((arg) => arg.name.value === 'initialCount')?.value;
      if (count?.kind === Kind.NULL || (count?.kind === Kind.INT && Number(count.value) < 0)) {
        const found = count.kind === Kind.NULL ? 'null' : count.value;
        context.reportError(new GraphQLError(`${MUST}, found ${found}.`, { nodes: count }));
      }
    },
  };
}

type Started = { args: ExecutionArgs; setResultAndStopExecution: (result: ExecutionResult) => void };

function refuseInitialCounts({ args, setResultAndStopExecution }: Started): void {
  const analysis = analysisOf(args.document, args.operationName);
  if (!analysis?.initialCountVariables.length) return;
  const coerced = limitVariables(args, analysis);
  if (!coerced) return;
  const errors = analysis.initialCountVariables
    .filter((name) => coerced[name] === null || (coerced[name] as number) < 0)
    .map((name) => new GraphQLError(`Variable "$${name}" got invalid value ${String(coerced[name])}; ${MUST}.`, { extensions: { code: 'BAD_USER_INPUT' } }));
  if (errors.length > 0) setResultAndStopExecution({ errors });
}

export function useStreamInitialCount(): Plugin {
  return {
    onValidate: ({ addValidationRule }) => addValidationRule(streamInitialCountRule),
    onExecute: refuseInitialCounts,
    onSubscribe: refuseInitialCounts,
  };
}
