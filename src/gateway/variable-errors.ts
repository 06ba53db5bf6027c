/**
 * A variable whose value does not coerce (a DateTime that does not parse, an unknown enum value,
 * a field its input type lacks): graphql-js reports it without a path, wrapping the value's own
 * error. It is the caller's mistake (BAD_USER_INPUT), whatever that inner error is.
 */
import { GraphQLError } from 'graphql';

export const isVariableValueError = (error: unknown): error is GraphQLError =>
  error instanceof GraphQLError && !error.path && error.originalError instanceof GraphQLError;
