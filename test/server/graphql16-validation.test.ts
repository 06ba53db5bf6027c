/**
 * Why src/gateway/plugins/limits/compat/graphql16-validation.ts exists: graphql 16's own validation, alone,
 * throws on a subscription whose root field `@skip`s on a variable, and passes an operation type the
 * schema has no root for. Each test fails the day graphql-js validates these as graphql 17 does.
 */
import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { describe, expect, it } from 'vitest';

const schema = buildSchema('type Query { a: Int } type Subscription { tick: Int }');

describe('graphql 16 validation alone', () => {
  it('throws on a root @skip that names a variable in a subscription', () => {
    const document = parse('subscription($skip: Boolean!) { tick @skip(if: $skip) }');
    expect(() => validate(schema, document, specifiedRules)).toThrow();
  });

  it('passes an operation type the schema has no root for', () => {
    expect(validate(schema, parse('mutation { a }'), specifiedRules)).toEqual([]);
  });
});
