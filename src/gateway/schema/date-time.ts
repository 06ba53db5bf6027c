/**
 * The DateTime scalar: graphql-scalars' DateTime, which parses and validates what callers send
 * (variables and literals, its errors and accepted formats), with a serializer that writes the
 * ISO-8601 text of a Date or of epoch milliseconds directly. graphql-scalars hands back a Date for
 * JSON.stringify to convert; the text is the same (`Date.prototype.toJSON` is `toISOString`).
 * Anything else (a string, an invalid Date, a number no Date can hold) still goes to
 * graphql-scalars, which decides as before.
 */
import { GraphQLScalarType } from 'graphql';
import { DateTimeResolver } from 'graphql-scalars';

function serializeDateTime(value: unknown): unknown {
  if (value instanceof Date) {
    if (!Number.isNaN(value.getTime())) return value.toISOString();
  } else if (typeof value === 'number') {
    // Our audit records carry epoch ms, checked against Date's range when the page was read.
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date.toISOString();
  }
  return DateTimeResolver.serialize(value);
}

export const DateTimeScalar = new GraphQLScalarType({
  ...DateTimeResolver.toConfig(),
  serialize: serializeDateTime,
});
