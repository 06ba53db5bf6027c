/**
 * The built schema contains the whole public contract (test/fixtures/contract.graphql, a copy of
 * the contract's schema.graphql): every type, field, argument, enum value, union member and
 * interface, with the same nullability. It may add, never change or drop.
 */
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  findBreakingChanges,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type GraphQLArgument,
  type GraphQLNamedType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema, subgraphSdl } from '../../src/gateway/schema/index.js';

const FEDERATION_KEY = 'directive @key(fields: String!, resolvable: Boolean = true) repeatable on OBJECT | INTERFACE\n';
const CONTRACT = buildSchema(FEDERATION_KEY + readFileSync(new URL('../fixtures/contract.graphql', import.meta.url), 'utf8'));
const BUILT_IN = new Set(['String', 'Boolean', 'ID', 'Int', 'Float']);

/** What a client relies on of a type, as plain data: compared with toMatchObject, additions pass. */
function shape(type: GraphQLNamedType): unknown {
  if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
    const fields = Object.fromEntries(
      Object.values(type.getFields()).map((field) => [
        field.name,
        {
          type: String(field.type),
          args: 'args' in field ? Object.fromEntries(field.args.map((arg: GraphQLArgument) => [arg.name, String(arg.type)])) : {},
        },
      ]),
    );
    const interfaces = isInputObjectType(type) ? [] : type.getInterfaces().map((i) => i.name);
    return { kind: type.constructor.name, fields, interfaces: Object.fromEntries(interfaces.map((name) => [name, true])) };
  }
  if (isEnumType(type)) return { kind: 'enum', values: Object.fromEntries(type.getValues().map((v) => [v.name, true])) };
  if (isUnionType(type)) return { kind: 'union', members: Object.fromEntries(type.getTypes().map((t) => [t.name, true])) };
  return { kind: type.constructor.name };
}

const contractTypes = Object.values(CONTRACT.getTypeMap()).filter(
  (type) => !type.name.startsWith('__') && !BUILT_IN.has(type.name),
);

describe('the public contract', () => {
  it.each(contractTypes.map((type) => [type.name, type] as const))('%s is served as the contract says', (name, type) => {
    const built = schema.getType(name);
    expect(built, `${name} is missing`).toBeDefined();
    expect(shape(built!)).toMatchObject(shape(type) as object);
  });

  it('has no breaking change against the contract', () => {
    // @key is a federation directive: the subgraph SDL carries it (below), the served schema does not.
    const changes = findBreakingChanges(CONTRACT, schema).filter((c) => c.description !== 'key was removed.');
    expect(changes).toEqual([]);
  });

  it('keeps UpdateSession an entity keyed by id in the subgraph SDL', () => {
    expect(subgraphSdl()).toMatch(/type UpdateSession\s+@key\(fields: "id"\)/);
    expect(subgraphSdl()).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+", import: \[[^\]]*"@key"/);
  });
});
