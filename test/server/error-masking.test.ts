/** The gateway's error masking: what a client sees of an error it was not meant to see. */
import { GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { errorMaskingFor } from '../../src/error-masking.js';

const maskError = errorMaskingFor(1024);
const fieldError = (original: Error) =>
  new GraphQLError(original.message, { nodes: parse('{ x }').definitions, path: ['x'], originalError: original });

describe('error masking', () => {
  it('masks an unexpected resolver error: the message of the options, code INTERNAL_SERVER_ERROR, its path kept', () => {
    const masked = maskError(fieldError(new Error('connection to 10.0.0.7 refused')), 'Unexpected error.', false) as GraphQLError;
    expect(masked.message).toBe('Unexpected error.');
    expect(masked.path).toEqual(['x']);
    expect(masked.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(JSON.stringify(masked.toJSON())).not.toContain('10.0.0.7');
  });

  it('shows the original error in development, as Yoga does, still with our code', () => {
    const masked = maskError(fieldError(new Error('connection to 10.0.0.7 refused')), 'Unexpected error.', true) as GraphQLError;
    expect(masked.message).toBe('Unexpected error.');
    expect(masked.extensions).toMatchObject({
      code: 'INTERNAL_SERVER_ERROR',
      originalError: { message: 'connection to 10.0.0.7 refused' },
    });
  });

  it('masks a thrown value that is not an Error', () => {
    const masked = maskError('a string', 'Unexpected error.', false) as GraphQLError;
    expect([masked.message, masked.extensions.code]).toEqual(['Unexpected error.', 'INTERNAL_SERVER_ERROR']);
  });

  it('keeps the code and message of a GatewayError, even in development', () => {
    const masked = maskError(fieldError(new GatewayError('NOT_FOUND', 'No such session.')), 'Unexpected error.', true) as GraphQLError;
    expect([masked.message, masked.extensions]).toEqual(['No such session.', { code: 'NOT_FOUND' }]);
  });
});
