/** The gateway's error masking: what a client sees of an error it was not meant to see. */
import { GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/lib/errors.js';
import { clientErrorCode, errorMaskingFor } from '../../src/gateway/error-masking.js';

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

describe('the code a caller mistake gets', () => {
  const requestError = (message: string, extensions?: Record<string, unknown>) =>
    new GraphQLError(message, { nodes: parse('{ x }').definitions, path: ['x'], ...(extensions ? { extensions } : {}) });

  it('keeps the nodes and path of a GatewayError', () => {
    const masked = maskError(fieldError(new GatewayError('NOT_FOUND', 'No such session.')), 'Unexpected error.', false) as GraphQLError;
    expect(masked.path).toEqual(['x']);
    expect(masked.nodes).toHaveLength(1);
  });

  it('masks a GatewayError thrown outside GraphQL, as any unexpected error', () => {
    const masked = maskError(new GatewayError('NOT_FOUND', 'No such session.'), 'Unexpected error.', false) as GraphQLError;
    expect([masked.message, masked.extensions.code]).toEqual(['Unexpected error.', 'INTERNAL_SERVER_ERROR']);
  });

  it('gives a variable whose value does not coerce BAD_USER_INPUT, with its message and place', () => {
    const inner = new GraphQLError('Expected a DateTime.');
    const error = new GraphQLError('Variable "$from" got invalid value "soon"; Expected a DateTime.', {
      nodes: parse('{ x }').definitions,
      originalError: inner,
    });
    const masked = maskError(error, 'Unexpected error.', false) as GraphQLError;
    expect([masked.message, masked.extensions]).toEqual(['Variable "$from" got invalid value "soon"; Expected a DateTime.', { code: 'BAD_USER_INPUT' }]);
    expect(masked.nodes).toHaveLength(1);
  });

  it('answers several operations without a name to choose one with BAD_REQUEST, keeping the rest of its extensions', () => {
    const error = new GraphQLError('Could not determine what operation to execute.', {
      extensions: { code: 'OPERATION_RESOLUTION_FAILURE', http: { status: 400 } },
    });
    const masked = maskError(error, 'Unexpected error.', false) as GraphQLError;
    expect([masked.message, masked.extensions]).toEqual([
      'Could not determine what operation to execute.',
      { code: 'BAD_REQUEST', http: { status: 400 } },
    ]);
  });

  it('says how large a request body may be when Yoga refuses one, with BAD_REQUEST and its status', () => {
    const error = new GraphQLError('Request is too large', { extensions: { code: 'REQUEST_ENTITY_TOO_LARGE', http: { status: 413 } } });
    const masked = maskError(error, 'Unexpected error.', false) as GraphQLError;
    expect([masked.message, masked.extensions]).toEqual(['The request body is larger than 1024 bytes.', { code: 'BAD_REQUEST', http: { status: 413 } }]);
    expect((errorMaskingFor(5000)(error, 'Unexpected error.', false) as GraphQLError).message).toBe('The request body is larger than 5000 bytes.');
  });

  it('leaves an error of the request phase that has a code as it is', () => {
    const error = requestError('Not allowed.', { code: 'FORBIDDEN', http: { status: 403 } });
    expect(maskError(error, 'Unexpected error.', false)).toBe(error);
  });

  it.each([
    [{ http: { status: 400 } }, 'Bad parameters.', 'BAD_REQUEST'],
    [{ http: { status: 499 } }, 'Gone.', 'BAD_REQUEST'],
    [{ http: { status: 500 } }, 'Broken.', 'INTERNAL_SERVER_ERROR'],
    [undefined, 'Broken without a status.', 'INTERNAL_SERVER_ERROR'],
    [undefined, 'Variable "$first" of required type "Int!" was not provided.', 'BAD_USER_INPUT'],
    [{ http: { status: 500 } }, 'Variable "$first" of required type "Int!" was not provided.', 'BAD_USER_INPUT'],
    [undefined, 'Variables are missing.', 'INTERNAL_SERVER_ERROR'],
  ])('gives an uncoded error of the request phase with %j and message %j the code %s, its message, place and extensions kept', (extensions, message, code) => {
    const masked = maskError(requestError(message, extensions), 'Unexpected error.', false) as GraphQLError;
    expect([masked.message, masked.extensions]).toEqual([message, { ...extensions, code }]);
    expect(masked.path).toEqual(['x']);
    expect(masked.nodes).toHaveLength(1);
  });

  it("keeps an unexpected error's place and Yoga's extensions, with our code", () => {
    const error = new GraphQLError('connection refused', {
      nodes: parse('{ x }').definitions,
      path: ['x'],
      originalError: new Error('connection refused'),
      extensions: { http: { status: 502 } },
    });
    const masked = maskError(error, 'Unexpected error.', false) as GraphQLError;
    expect([masked.message, masked.path, masked.extensions]).toEqual(['Unexpected error.', ['x'], { code: 'INTERNAL_SERVER_ERROR', unexpected: true, http: { status: 502 } }]);
    expect(masked.nodes).toHaveLength(1);
  });
});

describe('the code counted for an error', () => {
  it('is the code the client sees', () => {
    expect(clientErrorCode(maskError, fieldError(new GatewayError('NOT_FOUND', 'No such session.')))).toBe('NOT_FOUND');
    expect(clientErrorCode(maskError, new Error('boom'))).toBe('INTERNAL_SERVER_ERROR');
    expect(clientErrorCode(maskError, new GraphQLError('Missing credentials.', { extensions: { code: 'UNAUTHENTICATED' } }))).toBe('UNAUTHENTICATED');
  });

  it('is none for a code that is not a string, or a masking that gives an error without extensions', () => {
    expect(clientErrorCode(maskError, new GraphQLError('odd', { extensions: { code: 42 } }))).toBeUndefined();
    expect(clientErrorCode(() => new Error('plain'), new Error('boom'))).toBeUndefined();
  });
});
