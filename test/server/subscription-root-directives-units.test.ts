/**
 * The subscription root rule (src/gateway/plugins/limits/compat/graphql16-validation.ts) in a Yoga of its own:
 * root `@skip`/`@include` refused, everything else as graphql 16's SingleFieldSubscriptionsRule
 * decides. Over every transport of the gateway: test/live/subscription-root-directives.test.ts.
 */
import { parse, SingleFieldSubscriptionsRule, validate } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useGraphql17Validation } from '../../src/gateway/plugins/limits/compat/graphql16-validation.js';

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query { a: String }
    type Subscription { tick: Tick, tock: Tick }
    type Tick { n: Int, label: String }
  `,
  resolvers: {
    Subscription: {
      tick: {
        subscribe: async function* () {
          yield { tick: { n: 1, label: 'one' } };
        },
      },
    },
  },
});

type Errors = { message: string }[];

async function errorsOf(query: string, variables?: Record<string, unknown>): Promise<Errors | undefined> {
  const yoga = createYoga({ schema, logging: false, plugins: [useGraphql17Validation()] });
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables }),
  });
  const data = /^data: (.*)$/m.exec(await response.text())?.[1];
  return (JSON.parse(data ?? '{}') as { errors?: Errors }).errors;
}

const ROOT_CONDITION = 'Anonymous Subscription must not use `@skip` or `@include` directives in the top level selection.';

describe('the single root field of a subscription', () => {
  it('may carry @skip and @include below its root', async () => {
    expect(await errorsOf('subscription { tick { n label @skip(if: true) ... @include(if: false) { n } } }')).toBeUndefined();
  });

  it.each([
    ['on the root field', 'subscription { tick @skip(if: false) { n } }'],
    ['on a root inline fragment', 'subscription { ... @include(if: true) { tick { n } } }'],
    ['on a field of a root inline fragment', 'subscription { ... { tick @include(if: true) { n } } }'],
    ['on a root fragment spread', 'subscription { ...F @skip(if: false) } fragment F on Subscription { tick { n } }'],
    ['inside a fragment spread at the root', 'subscription { ...F } fragment F on Subscription { ...G } fragment G on Subscription { tick @skip(if: false) { n } }'],
  ])('may not carry them %s', async (_case, query) => {
    expect(await errorsOf(query)).toMatchObject([{ message: ROOT_CONDITION }]);
  });

  it('names the subscription, and reports it once however many conditions', async () => {
    const query = 'subscription Ticks($on: Boolean!) { tick @include(if: $on) @skip(if: false) { n } }';
    expect(await errorsOf(query, { on: true })).toMatchObject([
      { message: 'Subscription "Ticks" must not use `@skip` or `@include` directives in the top level selection.' },
    ]);
  });

  it('still refuses two root fields, and an introspection root field', async () => {
    expect(await errorsOf('subscription { tick { n } tock { n } }')).toMatchObject([
      { message: 'Anonymous Subscription must select only one top level field.' },
    ]);
    expect(await errorsOf('subscription { __typename }')).toMatchObject([
      { message: 'Anonymous Subscription must not select an introspection top level field.' },
    ]);
  });

  it('leaves fragment cycles to their own rule', async () => {
    const errors = await errorsOf('subscription { ...F } fragment F on Subscription { ...F }');
    expect(errors?.map((e) => e.message)).toEqual(['Cannot spread fragment "F" within itself.']);
  });

  it("is needed while graphql's own rule lets root @skip through (graphql 16; graphql 17's refuses it)", () => {
    const document = parse('subscription { tick @skip(if: false) { n } }');
    expect(validate(schema, document, [SingleFieldSubscriptionsRule])).toEqual([]);
  });
});
