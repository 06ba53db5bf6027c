/**
 * Fields that share a response key must merge: validation (OverlappingFieldsCanBeMergedRule)
 * compares them pairwise, at every place in the response where they meet, through fragments too.
 * The comparisons grow with the square of the repeats: 360 repeats of one field (13 KB, within
 * every other limit) took 1-2.4 s of validation, blocking the event loop; graphql-js's own budget
 * for the rule (500,000 steps) still lets one document take some 0.4 s. Here the work is counted
 * from the parsed document, in time linear in what is counted, and a document over the limit is
 * refused as it is parsed, before any validation rule runs: its refusal is kept with the parse
 * errors, so sending it again costs a lookup.
 *
 * @graphql-yoga/plugin-defer-stream validates with its own copy of the rule, which also compares
 * `@stream`, while graphql-js's copy still runs (the plugin's attempt to drop it leaves envelop's
 * rule list as it was): every comparison was made twice, by the copy slowly and with no budget,
 * and every conflict reported twice. The copy is dropped here, and `@stream` compared where
 * fields meet.
 */
import {
  GraphQLError,
  Kind,
  OverlappingFieldsCanBeMergedRule,
  print,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** A selection set whose fields land at one place in the response, and how it got there. */
interface Member {
  readonly selectionSet: SelectionSetNode;
  /** The fragment spread that brought it (the outermost), or OWN. */
  readonly origin: string;
}

/** Fragment names are never empty. */
const OWN = '';

/** The fields with one response key at one place in the response. */
interface Meeting {
  readonly fields: FieldNode[];
  /** Fields per origin. */
  readonly origins: Map<string, number>;
  /** Once a field with a selection set is met. */
  subselections?: Member[];
}

const pairs = (n: number) => (n * (n - 1)) / 2;

/**
 * Walks every place in the response where fields meet, fragments spread into their place (each
 * once per selection set, as validation and execution take them), and counts the work of checking
 * that they merge, as graphql-js does it: each selection collected, each pair of fields with one
 * response key (fields that one fragment brings are compared with each other once, within that
 * fragment), each field against each fragment spread beside it, each pair of fragments spread
 * together. Stops as soon as the count passes `limit`, so a hostile document costs no more than
 * the limit; returns the count. `meet` sees every meeting of fields, one field alone included, but
 * those one fragment brings alone, which it sees within the fragment.
 */
export function fieldMergeWork(
  document: DocumentNode,
  limit: number,
  meet?: (responseKey: string, fields: readonly FieldNode[]) => void,
): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  // Validation compares within every operation and every fragment, used or not.
  const places: Member[][] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION) {
      places.push([{ selectionSet: definition.selectionSet, origin: OWN }]);
    }
  }
  let work = 0;
  for (let members = places.pop(); members; members = places.pop()) {
    const meetings = new Map<string, Meeting>();
    let spreadsHere = 0;
    for (const member of members) {
      let fields = 0;
      const spread = new Set<string>();
      const pending: Member[] = [member];
      for (let next = pending.pop(); next; next = pending.pop()) {
        for (const selection of next.selectionSet.selections) {
          if (++work > limit) return work;
          if (selection.kind === Kind.FIELD) {
            fields++;
            const key = selection.alias?.value ?? selection.name.value;
            let meeting = meetings.get(key);
            if (!meeting) meetings.set(key, (meeting = { fields: [], origins: new Map() }));
            meeting.fields.push(selection);
            meeting.origins.set(next.origin, (meeting.origins.get(next.origin) ?? 0) + 1);
            if (selection.selectionSet) (meeting.subselections ??= []).push({ selectionSet: selection.selectionSet, origin: next.origin });
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            pending.push({ selectionSet: selection.selectionSet, origin: next.origin });
          } else if (!spread.has(selection.name.value)) {
            spread.add(selection.name.value);
            const fragment = fragments.get(selection.name.value);
            if (fragment) pending.push({ selectionSet: fragment.selectionSet, origin: next.origin === OWN ? selection.name.value : next.origin });
          }
        }
      }
      work += fields * spread.size;
      spreadsHere += spread.size;
    }
    work += pairs(spreadsHere);
    for (const [key, { fields, origins, subselections }] of meetings) {
      work += pairs(fields.length);
      for (const [origin, count] of origins) if (origin !== OWN) work -= pairs(count);
      if (work > limit) return work;
      // Fields one fragment brings, and all below them, were compared within the fragment.
      if (origins.size === 1 && !origins.has(OWN)) continue;
      meet?.(key, fields);
      if (subselections) places.push(subselections);
    }
  }
  return work;
}

/** A field's `@stream` arguments, printed and sorted (undefined without one): equal streams, equal keys. */
function streamKey(field: FieldNode): string | undefined {
  // Stryker disable next-line OptionalChaining: the parser gives every field a directives array
  const stream = field.directives?.find((directive) => directive.name.value === 'stream');
  // Stryker disable next-line ArrayDeclaration: the parser gives every directive an arguments array
  return stream && JSON.stringify((stream.arguments ?? []).map((arg) => `${arg.name.value}: ${print(arg.value)}`).sort());
}

/**
 * Fields that merge must agree on `@stream`: streamed or not, with the same arguments. The check
 * the defer plugin's copy of OverlappingFieldsCanBeMergedRule makes, reported once per place.
 */
function streamsMergeRule(limit: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    // Stryker disable next-line BooleanLiteral: a document without @stream has no fields that differ in it: the check would find nothing
    let streams = false;
    return {
      Directive(node) {
        // Stryker disable next-line ConditionalExpression: `true` as above; `false` does what the tested StringLiteral mutant does
        if (node.name.value === 'stream') streams = true;
      },
      Document: {
        leave(document) {
          // Stryker disable next-line ConditionalExpression: `false` as above; `true` does for a document with @stream what the tested BooleanLiteral mutant does
          if (!streams) return;
          fieldMergeWork(document, limit, (key, fields) => {
            const first = streamKey(fields[0]!);
            const other = fields.find((field) => streamKey(field) !== first);
            if (!other) return;
            context.reportError(
              new GraphQLError(
                `Fields "${key}" conflict because they have differing stream directives. Use different aliases on the fields to fetch both if this was intentional.`,
                { nodes: [fields[0]!, other] },
              ),
            );
          });
        },
      },
    };
  };
}

/** Yoga's rules and the defer plugin's, but one OverlappingFieldsCanBeMergedRule: graphql-js's. */
function withoutCopiesOfTheMergeRule(rules: readonly ValidationRule[]): ValidationRule[] {
  return rules.filter((rule) => rule === OverlappingFieldsCanBeMergedRule || rule.name !== OverlappingFieldsCanBeMergedRule.name);
}

/**
 * Refuses, as it is parsed, a document whose fields take more than `maxWork` steps to merge; has
 * validation run graphql-js's merge rule alone, and compare `@stream` where fields meet.
 */
export function useFieldMergeLimit({ maxWork }: { maxWork: number }): Plugin {
  const tooMuch = () =>
    new GraphQLError(
      `The operation repeats fields too often: checking that fields sharing a response key can be merged (fragments included) would take more than ${maxWork} steps, the field merging limit. Ask for each field once.`,
      { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
    );
  const streamsMerge = streamsMergeRule(maxWork);
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        const document = parseFn(source, options);
        if (fieldMergeWork(document, maxWork) > maxWork) throw tooMuch();
        return document;
      });
    },
    onValidate({ validateFn, setValidationFn, addValidationRule }) {
      addValidationRule(streamsMerge);
      // Filtered when validation runs: the defer plugin adds its copy after this hook.
      setValidationFn((schema, document, rules, ...rest) => validateFn(schema, document, rules && withoutCopiesOfTheMergeRule(rules), ...rest));
    },
  };
}
