import fc from 'fast-check';
import { GraphQLError, Kind, type GraphQLScalarType } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/gateway/schema/index.js';

const DateTimeScalar = schema.getType('DateTime') as GraphQLScalarType;

/** What a client reads: the value as JSON, or the error the serializer raised. */
function asJson(serialize: (value: unknown) => unknown, value: unknown): string {
  try {
    return JSON.stringify({ value: serialize(value) });
  } catch (error) {
    return `error: ${error instanceof Error ? error.message : String(error)}`;
  }
}

const MAX_MS = 8_640_000_000_000_000;

describe('DateTime scalar', () => {
  it('writes the ISO text of a Date or of epoch ms itself, the same text as graphql-scalars', () => {
    expect(DateTimeScalar.serialize(Date.UTC(2026, 10, 21, 10, 15, 30, 123))).toBe('2026-11-21T10:15:30.123Z');
    expect(DateTimeScalar.serialize(new Date(Date.UTC(2026, 10, 21)))).toBe('2026-11-21T00:00:00.000Z');
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: -MAX_MS, max: MAX_MS }), fc.double({ min: -MAX_MS, max: MAX_MS, noNaN: true })), (ms) => {
        expect(asJson((v) => DateTimeScalar.serialize(v), ms)).toBe(asJson((v) => DateTimeResolver.serialize(v), ms));
        expect(asJson((v) => DateTimeScalar.serialize(v), new Date(ms))).toBe(asJson((v) => DateTimeResolver.serialize(v), new Date(ms)));
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves strings, invalid Dates and other types to graphql-scalars, and refuses a number no Date holds', () => {
    for (const value of ['2026-11-21T10:15:30+02:00', 'yesterday', new Date(Number.NaN), true, null, {}]) {
      expect(asJson((v) => DateTimeScalar.serialize(v), value)).toBe(asJson((v) => DateTimeResolver.serialize(v), value));
    }
    expect(() => DateTimeScalar.serialize(new Date(Number.NaN))).toThrow(GraphQLError);
    for (const value of [MAX_MS + 1, Number.NaN, Infinity]) expect(() => DateTimeScalar.serialize(value)).toThrow(RangeError);
  });

  it('parses what callers send exactly as graphql-scalars does', () => {
    expect(DateTimeScalar.parseValue).toBe(DateTimeResolver.parseValue);
    expect(DateTimeScalar.parseLiteral).toBe(DateTimeResolver.parseLiteral);
    expect(DateTimeScalar.parseValue('2026-11-21T10:15:30.123Z')).toEqual(new Date(Date.UTC(2026, 10, 21, 10, 15, 30, 123)));
    expect(() => DateTimeScalar.parseLiteral({ kind: Kind.STRING, value: '2026-13-01T00:00:00Z' })).toThrow(/invalid date-time-string/);
  });
});
