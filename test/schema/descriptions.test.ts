/**
 * The client schema documents itself: every type, field, argument, input field, enum value and
 * directive a client can see has a description (what GraphiQL's docs and IDE hovers show).
 */
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedDirective,
  isSpecifiedScalarType,
  type GraphQLSchema,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { clientSchemaOf } from '../../codegen/client-schema.js';
import { schema } from '../../src/gateway/schema/index.js';

/** Paths like `Type.field(argument)` of everything without a description. */
function undocumented(s: GraphQLSchema): string[] {
  const missing: string[] = [];
  const check = (path: string, description: string | null | undefined) => {
    if (!description?.trim()) missing.push(path);
  };
  for (const type of Object.values(s.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    check(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name})`, arg.description);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields())) check(`${type.name}.${field.name}`, field.description);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
    }
  }
  for (const directive of s.getDirectives()) {
    if (isSpecifiedDirective(directive)) continue;
    check(`@${directive.name}`, directive.description);
    for (const arg of directive.args) check(`@${directive.name}(${arg.name})`, arg.description);
  }
  return missing;
}

describe('client schema descriptions', () => {
  it('describes every type, field, argument, input field and enum value', () => {
    expect(undocumented(clientSchemaOf(schema))).toEqual([]);
  });

  it('holds for the committed schema/schema.graphql too', () => {
    const committed = buildSchema(readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8'));
    expect(undocumented(committed)).toEqual([]);
  });

  it('gives the fields an event type inherits from AuditRecord the interface text', () => {
    const audit = schema.getType('AuditRecord');
    const login = schema.getType('LoginEvent');
    if (!isInterfaceType(audit) || !isObjectType(login)) throw new Error('AuditRecord or LoginEvent missing');
    for (const [name, field] of Object.entries(audit.getFields())) {
      expect(login.getFields()[name]?.description, name).toBe(field.description);
    }
  });
});
