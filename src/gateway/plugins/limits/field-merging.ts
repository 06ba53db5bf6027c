/**
 * OverlappingFieldsCanBeMergedRule compares fields sharing a response key pairwise, so a small document can block the
 * event loop: the work is counted at parse, past the limit a refusal. @graphql-yoga/plugin-defer-stream 3.24's copy of
 * the rule (it also compares `@stream`) reports each conflict again beside graphql-js's: dropped, `@stream` compared here.
 */
import {
  GraphQLError,
  Kind,
  OverlappingFieldsCanBeMergedRule,
  print,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { fragmentsOf } from './document-analysis.js';

/** A selection set whose fields land at one place in the response, and the outermost fragment that brought it (or OWN). */
type Member = { readonly selectionSet: SelectionSetNode; readonly origin: string };

/** Fragment names are never empty. */
const OWN = '';

/** The fields with one response key at one place in the response. */
type Meeting = { readonly fields: FieldNode[]; readonly origins: Map<string, number>; subselections?: Member[] };

const pairs = (n: number) => (n * (n - 1)) / 2;

/** A field's `@stream` arguments, printed and sorted (undefined without one): equal streams, equal keys. */
function streamKey(field: FieldNode): string | undefined {
  const stream = field.directives?.find((directive) => directive.name.value === 'stream');
  return stream && JSON.stringify(stream.arguments?.map((arg) => `${arg.name.value}: ${print(arg.value)}`).sort());
}

/** Fields that merge must agree on `@stream` (the defer plugin's check), reported once per place. */
function streamConflict(key: string, fields: readonly FieldNode[]): GraphQLError | undefined {
  const first = streamKey(fields[0]!);
  const other = fields.find((field) => streamKey(field) !== first);
  if (!other) return undefined;
  const message = `Fields "${key}" conflict because they have differing stream directives. Use different aliases on the fields to fetch both if this was intentional.`;
  return new GraphQLError(message, { nodes: [fields[0]!, other] });
}

/** The work graphql-js does checking that fields merge, counted up to past `limit`, and the `@stream` conflicts met. */
export function fieldMergeCheck(document: DocumentNode, limit: number): { work: number; conflicts: GraphQLError[] } {
  const fragments = fragmentsOf(document);
  const conflicts: GraphQLError[] = [];
  // Validation compares within every operation and every fragment, used or not.
  const places: Member[][] = document.definitions.flatMap((definition) =>
    'selectionSet' in definition ? [[{ selectionSet: definition.selectionSet, origin: OWN }]] : [],
  );
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
          if (++work > limit) return { work, conflicts };
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
      if (work > limit) return { work, conflicts };
      // Fields one fragment brings, and all below them, were compared within the fragment.
      if (origins.size === 1 && !origins.has(OWN)) continue;
      const conflict = fields.length > 1 && streamConflict(key, fields);
      if (conflict) conflicts.push(conflict);
      if (subselections) places.push(subselections);
    }
  }
  return { work, conflicts };
}

const streamConflicts = new WeakMap<DocumentNode, GraphQLError[]>();

function withoutCopiesOfTheMergeRule(rules: readonly ValidationRule[]): ValidationRule[] {
  return rules.filter((rule) => rule === OverlappingFieldsCanBeMergedRule || rule.name !== OverlappingFieldsCanBeMergedRule.name);
}

export function useFieldMergeLimit({ maxWork }: { maxWork: number }): Plugin {
  const streamsMergeRule = (context: ValidationContext): ASTVisitor => ({
    Document(document) {
      for (const error of streamConflicts.get(document) ?? fieldMergeCheck(document, maxWork).conflicts) context.reportError(error);
    },
  });
  return {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        const document = parseFn(source, options);
        const { work, conflicts } = fieldMergeCheck(document, maxWork);
        if (work > maxWork) {
          const message = `The operation repeats fields too often: checking that fields sharing a response key can be merged (fragments included) would take more than ${maxWork} steps, the field merging limit. Ask for each field once.`;
          throw new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
        }
        streamConflicts.set(document, conflicts);
        return document;
      });
    },
    onValidate({ validateFn, setValidationFn, addValidationRule }) {
      addValidationRule(streamsMergeRule);
      // Filtered when validation runs: the defer plugin adds its copy after this hook.
      setValidationFn((schema, document, rules, ...rest) => validateFn(schema, document, rules && withoutCopiesOfTheMergeRule(rules), ...rest));
    },
  };
}
