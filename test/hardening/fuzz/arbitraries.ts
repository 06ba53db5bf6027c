/**
 * fast-check arbitraries for hostile callers: GraphQL documents built from this schema's fields
 * with bad, extreme and random arguments (and then mangled), variables of any JSON shape, and
 * `_entities` representations of every kind.
 */
import fc from 'fast-check';
import { MISSING_SESSION_ID, SESSION_IDS } from '../../../simulator/index.js';

/** What a client may see in `extensions.code`: the contract's codes and the README's additions. */
export const CONTRACT_CODES: ReadonlySet<string> = new Set([
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'NOT_FOUND',
  'UPSTREAM_UNAUTHORIZED',
  'UPSTREAM_UNAVAILABLE',
  'UPSTREAM_INVALID_RESPONSE',
  'UPSTREAM_NOT_CONFIGURED',
  'RATE_LIMITED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_ONLY',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
]);

const text = fc.string({ maxLength: 24 });
const stringLiteral = fc.oneof(
  text.map((s) => JSON.stringify(s)),
  fc.constantFrom('""', '"   "', `"${'x'.repeat(2000)}"`, '"eyJ9"', '"bm90IGEgY3Vyc29y"', '"2026-11-21T10:15:30Z"', '"LOGIN"'),
);
/** Page sizes: mostly small, sometimes the extremes. */
const size = fc.oneof(
  { arbitrary: fc.integer({ min: -3, max: 60 }).map(String), weight: 12 },
  { arbitrary: fc.constantFrom('5000', '5001', '2147483647', '-2147483648', '1.5', 'null', '"10"'), weight: 2 },
  { arbitrary: fc.constant('$n'), weight: 2 },
);
const sessionId = fc.oneof(
  fc.constantFrom(...Object.values(SESSION_IDS), MISSING_SESSION_ID, '', '  ', 'a'.repeat(1025)).map((s) => JSON.stringify(s)),
  stringLiteral,
  fc.constantFrom('$s', '42', 'null'),
);
const filter = fc
  .record(
    {
      objectType: fc.oneof(stringLiteral, fc.constantFrom('$s', 'null', '5')),
      action: fc.constantFrom('CREATE', 'UPDATE', 'NOPE', '"CREATE"', 'null'),
      from: fc.oneof(stringLiteral, fc.constant('$s')),
      to: fc.oneof(stringLiteral, fc.constant('$s')),
    },
    { requiredKeys: [] },
  )
  .map((f) => `{ ${Object.entries(f).map(([k, v]) => `${k}: ${v}`).join(', ')} }`);

const auditArgs = fc
  .record(
    { first: size, last: size, after: stringLiteral, before: stringLiteral, filter: fc.oneof(filter, fc.constant('$f')) },
    { requiredKeys: [] },
  )
  .map((a) => Object.entries(a).map(([k, v]) => `${k}: ${v}`).join(', '));

const AUDIT_SELECTIONS = [
  '{ edges { cursor node { __typename ... on AuditRecord { uuid timestamp values actor { userName } } ... on LoginEvent { success authMethods } } } pageInfo { hasNextPage hasPreviousPage endCursor } window { from to } }',
  '{ pageInfo { hasNextPage } }',
  '{ edges { nope } }',
  '',
];

/** Edges streamed with any initial count: below 0, null and variables included. */
const streamedSelection = size.map((count) => `{ edges @stream(initialCount: ${count}) { cursor } }`);

const field = fc.oneof(
  fc
    .tuple(auditArgs, fc.oneof(fc.constantFrom(...AUDIT_SELECTIONS), streamedSelection))
    .map(([args, sel]) => `auditEvents(${args}) ${sel}`),
  sessionId.map((id) => `updateSessionFiles(updateSessionId: ${id}) { name status size errorMessage { id params { key value { s l { id } } } } }`),
  sessionId.map((id) => `updateSession(id: ${id}) { id files { name checksumInfo { algorithm } } }`),
  fc.constant('_entities(representations: $r) { __typename ... on UpdateSession { id files { name } } }'),
  fc.constantFrom('__typename', 'x', '_service { sdl }', '__schema { queryType { name } }'),
);

const VARIABLE_DEFINITIONS = [
  '',
  '($n: Int)',
  '($n: Int = 5000)',
  '($n: Int = 3, $s: String, $f: AuditEventFilter)',
  '($r: [_Any!]!)',
  '($r: [_Any!]!, $n: Int = 1, $s: ID!)',
  '($n: String)',
];

/** A document over this schema: 1-40 aliased root fields, any operation type, sometimes a fragment. */
export const document = fc
  .record({
    operation: fc.constantFrom('query', 'query', 'query Q', 'mutation', 'subscription', ''),
    variables: fc.constantFrom(...VARIABLE_DEFINITIONS),
    fields: fc.array(field, { minLength: 1, maxLength: 6 }),
    copies: fc.oneof({ arbitrary: fc.constant(1), weight: 6 }, { arbitrary: fc.integer({ min: 2, max: 40 }), weight: 1 }),
    viaFragment: fc.boolean(),
  })
  .map(({ operation, variables, fields, copies, viaFragment }) => {
    const selections = Array.from({ length: copies }, (_, c) => fields.map((f, i) => `f${c}_${i}: ${f}`).join('\n')).join('\n');
    const head = operation === '' ? '' : `${operation}${variables}`;
    return viaFragment ? `${head} { ...Root }\nfragment Root on Query { ${selections} }` : `${head} { ${selections} }`;
  });

/** Nested up to thousands deep, closed or not: refused by the parser, never a stack overflow. */
const deeplyNested = fc
  .record({
    depth: fc.integer({ min: 1, max: 4000 }),
    level: fc.constantFrom<[string, string]>(['[', ']'], ['{a:', '}'], ['{ a ', '}']),
    closed: fc.boolean(),
  })
  .map(({ depth, level: [open, close], closed }) => {
    const nested = open.repeat(depth) + (closed ? close.repeat(depth) : '');
    return open === '{ a '
      ? `{ a ${nested} }`
      : `{ _entities(representations: [{__typename: "UpdateSession", id: "x", x: ${nested}}]) { __typename } }`;
  });

/** A document, sometimes cut or with a character changed: parse errors and near-misses. */
export const mangledDocument = fc.oneof(
  { arbitrary: document, weight: 4 },
  {
    arbitrary: fc.tuple(document, fc.nat(), fc.string({ minLength: 1, maxLength: 3 })).map(([doc, at, insert]) => {
      const i = at % (doc.length + 1);
      return doc.slice(0, i) + insert + doc.slice(i + 1);
    }),
    weight: 2,
  },
  { arbitrary: fc.tuple(document, fc.nat()).map(([doc, at]) => doc.slice(0, at % (doc.length + 1))), weight: 1 },
  { arbitrary: fc.string({ maxLength: 200 }), weight: 1 },
  { arbitrary: deeplyNested, weight: 1 },
);

export const representation = fc.oneof(
  fc.record(
    {
      __typename: fc.constantFrom('UpdateSession', 'UpdateSession', 'Nope', '', 'Query', 'UpdateSessionFile', '__proto__'),
      id: fc.oneof(fc.constantFrom(...Object.values(SESSION_IDS), MISSING_SESSION_ID, '', 'a'.repeat(1025)), text, fc.integer(), fc.constant(null)),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

export const representations = fc.oneof(
  { arbitrary: fc.array(representation, { maxLength: 12 }), weight: 6 },
  { arbitrary: fc.array(representation, { minLength: 95, maxLength: 110 }), weight: 1 },
);

/** Variables for the names the documents use, of every JSON shape; sometimes not even an object. */
export const variables = fc.oneof(
  { arbitrary: fc.record({ n: fc.jsonValue({ maxDepth: 2 }), s: fc.jsonValue({ maxDepth: 2 }), f: fc.jsonValue({ maxDepth: 3 }), r: representations }, { requiredKeys: [] }), weight: 8 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);
