/** Limits tuned to this schema: the largest legitimate operations pass, alias bombs and deep or huge documents do not. */
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { useGraphql17Validation } from './compat/graphql16-validation.js';
import { useAuditRowLimits } from './audit-row-budget.js';
import { useFieldMergeLimit } from './field-merging.js';
import { useNestingLimit } from './nesting-limit.js';

export const operationLimits = {
  /** `_entities ... files errorMessage params value l params value l params value l params value s` is 17 deep. */
  maxDepth: 20,
  maxAliases: 30,
  maxTokens: 4000,
  /** Brackets open at once: the largest legitimate documents need about 25, the stack thousands. */
  maxNesting: 64,
  maxDirectives: 50,
  /** Steps of checking that fields sharing a response key merge (field-merging.ts): several full audit pages pass. */
  maxFieldMergeWork: 5000,
  /** Armor's cost multiplies by literal `first`/`last`: one full page with every field passes, repeated ones do not. */
  maxCost: 5_000_000,
  /** Audit rows one operation may ask for: two full pages. */
  maxAuditRows: 10_000,
  /** More rows or update sessions than these make an operation large: few of them run at once. */
  largeOperationRows: 1000,
  largeOperationSessions: 10,
  /** A large answer its client stops reading for this long is dropped. */
  largeAnswerStallMs: 60_000,
} as const;

/** Armor throws its rejections out of the validator, losing their code: reported through the context instead. */
const reportInContext = (context: ValidationContext | null, error: GraphQLError) =>
  context?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, '')));
const asValidationError = { propagateOnRejection: false, onReject: [reportInContext] };

export function useOperationLimits(options: { largeOperationConcurrency: number }): Plugin[] {
  const armor = new EnvelopArmor({
    maxDepth: { n: operationLimits.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...asValidationError },
    // Every alias counts, those of `__typename` too (armor leaves them out by default): each is a key of the answer.
    maxAliases: { n: operationLimits.maxAliases, allowList: [], ...asValidationError },
    // Counted while parsing: its rejection is a parse failure.
    maxTokens: { n: operationLimits.maxTokens },
    maxDirectives: { n: operationLimits.maxDirectives, ...asValidationError },
    costLimit: {
      ...asValidationError,
      maxCost: operationLimits.maxCost,
      objectCost: 2,
      scalarCost: 1,
      depthCostFactor: 1.5,
      ignoreIntrospection: true,
    },
    // Field suggestions are useful in GraphiQL and reveal nothing the schema doesn't.
    blockFieldSuggestion: { enabled: false },
  });
  return [
    useGraphql17Validation(),
    ...(armor.protect().plugins as Plugin[]),
    // After armor, whose token-limited parse function replaces any set before: these wrap it.
    useNestingLimit(operationLimits),
    useFieldMergeLimit({ maxWork: operationLimits.maxFieldMergeWork }),
    useAuditRowLimits({ ...operationLimits, ...options, maxRows: operationLimits.maxAuditRows }) as Plugin,
  ];
}
