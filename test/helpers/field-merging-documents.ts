/** Documents for the field merging limit (src/gateway/plugins/limits/field-merging.ts): legitimate ones, and repeats. */
import { getIntrospectionQuery } from 'graphql';
import { exampleOperations } from '../../src/gateway/examples/index.js';

export const words = (count: number, word: (i: number) => string) => Array.from({ length: count }, (_, i) => word(i)).join(' ');

const types = ['LoginEvent', 'LaunchEvent', 'LoginErrorEvent', 'LaunchErrorEvent', 'GroupEvent', 'AppEntitlementEvent', 'DirectorySyncProfileEvent', 'OtherAuditEvent'];
const everyField = 'uuid timestamp objectType objectAction objectId objectName baseType clientId deviceId organizationId sourceIp tenantId workspaceId values actor { id userName domain uuid }';
/** Every field of every union member, each member on its own. */
export const fullPage = `edges { cursor node { __typename ${types.map((type) => `... on ${type} { ${everyField} }`).join(' ')} } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;
const recordFields = 'uuid baseType timestamp organizationId tenantId actor { id userName domain uuid } clientId deviceId workspaceId sourceIp objectType objectId objectName objectAction values';
/** The contract's full page as test/server/limits.test.ts asks for it: the interface and every member. */
const contractPage = `query EveryField($first: Int) { auditEvents(first: $first) {
  window { from to } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  edges { cursor node { __typename
    ... on AuditRecord { ${recordFields} }
    ... on LoginEvent { success authMethods deviceType actorExternalId failureMessage }
    ... on LaunchEvent { success failureMessage resourceType }
    ... on LoginErrorEvent { failureMessage }
    ... on LaunchErrorEvent { failureMessage }
    ${['GroupEvent', 'AppEntitlementEvent', 'DirectorySyncProfileEvent', 'OtherAuditEvent'].map((type) => `... on ${type} { ${recordFields} }`).join(' ')}
  } } } }`;
const messageParams = (depth: number): string =>
  `params { key value { dt s d precision format i ${depth > 0 ? `l { id ${messageParams(depth - 1)} }` : ''} } }`;
const everyFileField = `name sourceType upstreamSourceType status size bytesTransferred keepInStorage checksumInfo { algorithm checksum }
  sourceEndpoint { uri scheme sslCertificateThumbprint } uploadEndpoint { uri scheme sslCertificateThumbprint }
  errorMessage { id defaultMessage localized args ${messageParams(3)} }`;

export const legitimate: [string, string][] = [
  ...exampleOperations().map((op): [string, string] => [`example: ${op.name}`, op.query]),
  ['the contract full page, every field of every union member', contractPage],
  ['two full pages, every member on its own (the row budget)', `query Two($n: Int = 5000) { a: auditEvents(first: $n) { ${fullPage} } b: auditEvents(last: $n) { ${fullPage} } }`],
  ['six full pages (test/soak/document-caches.test.ts)', `{ ${words(6, (k) => `p${k}: auditEvents(first: 0, filter: { objectType: "X${k}" }) { ${fullPage} }`)} }`],
  ['thirty full pages through a fragment', `{ ${words(30, (i) => `p${i}: auditEvents(first: 2) { ...Page }`)} } fragment Page on AuditEventConnection { ${fullPage} }`],
  ['update session files, errorMessage three `l` levels deep', `query Deep($id: ID!) { updateSessionFiles(updateSessionId: $id) { ${everyFileField} } }`],
  ['_entities with every file field', `query ($r: [_Any!]!) { _entities(representations: $r) { ... on UpdateSession { id files { ${everyFileField} } } } }`],
  [
    "a router's _entities fetch",
    'query($representations:[_Any!]!){_entities(representations:$representations){__typename ...on UpdateSession{__typename id files{__typename name size status errorMessage{__typename id params{__typename key value{__typename dt s l{__typename id params{__typename key value{__typename s}}}}}}}}}}',
  ],
  ["GraphiQL's introspection query", getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true, oneOf: true })],
];

/** A tree of `x`: each `x` holds `width` more, `depth` levels down. */
const tree = (depth: number, width: number): string => (depth === 0 ? 'x' : `x { ${words(width, () => tree(depth - 1, width))} }`);

/** Each within the token and nesting limits; most within every other one too. */
export const repeatedFields: [string, string][] = [
  ['one field 360 times (the probe)', `{ ${words(360, (i) => `updateSessionFiles(updateSessionId: "x${i}") { name }`)} }`],
  ['one field 360 times, the same arguments', `{ ${words(360, () => 'updateSessionFiles(updateSessionId: "x") { name }')} }`],
  ['one alias 360 times', `{ ${words(360, (i) => `a: updateSessionFiles(updateSessionId: "x${i}") { name }`)} }`],
  ['__typename 3990 times', `{ ${words(3990, () => '__typename')} }`],
  ['a field 120 times through as many fragments', `{ ${words(120, (i) => `...F${i}`)} } ${words(120, (i) => `fragment F${i} on Query { updateSessionFiles(updateSessionId: "x${i}") { name } }`)}`],
  ['a field twice in every selection set, nine levels down', `{ ${tree(9, 2)} }`],
  ['forty fields, each 25 times', `{ ${words(25, () => words(40, (k) => `f${k}`))} }`],
  ['sets repeated under repeated fields', `{ ${words(60, () => 'auditEvents { edges { cursor cursor } }')} }`],
  ['400 fragments spread together', `{ ${words(400, (i) => `...F${i}`)} } ${words(400, (i) => `fragment F${i} on Query { f${i} }`)}`],
  ['1900 fields beside 200 fragments', `{ ${words(1900, (i) => `f${i}`)} ${words(200, (i) => `...F${i}`)} } ${words(200, (i) => `fragment F${i} on Query { g${i} }`)}`],
];
