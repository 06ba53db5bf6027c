/**
 * Which error type of a refusal's body is read at all, and which parts of a credential it must not
 * repeat, down to the odd cases.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/lib/errors.js';
import { basicAuthorization } from '../../src/upstream/credentials.js';
import { errorTypeIn, forgetEchoedCredentials } from '../../src/upstream/error-mapping.js';

const kept = (type: string, sent: (string | undefined)[]) => {
  const error = new UpstreamError('UPSTREAM_UNAVAILABLE', 'identity', 'x', { upstreamError: type });
  forgetEchoedCredentials(error, sent);
  return error.detail?.['upstreamError'];
};

describe('an error type that repeats a credential', () => {
  it.each([
    ['a whole header value', 'session-id-7', ['session-id-7']],
    ['a bearer token', 'x.token-7', ['Bearer token-7']],
    ['a Basic user', 'invalid_client.someone', [basicAuthorization('someone', 'pw')]],
    ['a Basic password', 'err.pass-word', [basicAuthorization('someone', 'pass-word')]],
    ['a Basic password holding a colon', 'err.a:b', [basicAuthorization('someone', 'a:b')]],
    ['a Basic credential under a lower-case scheme', 'err.pass-word', [`basic ${btoa('u:pass-word')}`]],
    ['a secret of the body', 'refresh-7', [undefined, 'refresh-7']],
    ['a credential after an empty scheme', 'x.token-7', [' token-7']],
    ['a Basic credential without its padding', btoa('cluser:clpassSECRET').replace(/=+$/, ''), [basicAuthorization('cluser', 'clpassSECRET')]],
    ['the start of a token', 'err.eyJhbGciOiJSUzI1', ['Bearer eyJhbGciOiJSUzI1NiJ9.payload.signature']],
    ['the end of a session id', 'not_found.9f8e7d6c5b4a', ['0123456789f8e7d6c5b4a']],
    ['eight characters of a password', 'err.Secr3t-x', [basicAuthorization('someone', 'longSecr3t-xyz')]],
  ])('is dropped: %s', (_case, type, sent) => {
    expect(kept(type, sent)).toBeUndefined();
  });

  it.each([
    ['a Basic credential with an empty password', [basicAuthorization('someone', '')]],
    ['a Basic credential without a colon', [`Basic ${btoa('someone')}`]],
    ['an empty bearer token', ['Bearer ']],
    ['nothing sent', [undefined]],
    ['a bearer token that is base64 of the type', [`Bearer ${btoa('invalid_client')}`]],
    ['a token sharing seven characters in a row with the type', ['Bearer xx_clientyy']],
  ])('is kept when nothing of it is repeated: %s', (_case, sent) => {
    expect(kept('invalid_client', sent)).toBe('invalid_client');
  });

  it('leaves an error without a type as it is', () => {
    const error = new UpstreamError('UPSTREAM_UNAVAILABLE', 'identity', 'x', { route: 'r' });
    forgetEchoedCredentials(error, ['anything']);
    expect(error.detail).toEqual({ service: 'identity', route: 'r' });
  });
});

describe('the error type of a refusal body', () => {
  /** A body whose JSON is `value`, or one that is not JSON when `value` is an Error. */
  const body = (value: unknown) => (value instanceof Error ? 'not JSON {' : JSON.stringify(value));

  it.each([
    ['a vAPI type', { type: 'com.vmware.vapi.std.errors.not_found' }, 'com.vmware.vapi.std.errors.not_found'],
    ['an OAuth error code', { error: 'invalid_client', error_description: 'no' }, 'invalid_client'],
    ['the type, where both are given', { type: 'com.vmware.vapi.std.errors.unauthenticated', error: 'invalid_grant' }, 'com.vmware.vapi.std.errors.unauthenticated'],
    ['a type of 120 characters', { type: `a${'b'.repeat(119)}` }, `a${'b'.repeat(119)}`],
    ['a one-letter type', { error: 'x' }, 'x'],
  ])('reads %s', (_case, json, type) => {
    expect(errorTypeIn(body(json))).toBe(type);
  });

  it.each([
    ['a type of 121 characters', { type: `a${'b'.repeat(120)}` }],
    ['a type that does not start with a letter', { type: '1.not_found' }],
    ['a type with a space', { error: 'invalid client' }],
    ['a type that only starts like one', { error: 'invalid_client\nsecret' }],
    ['a type that only ends like one', { error: 'secret invalid_client' }],
    ['a type that is not a string', { type: 404 }],
    ['a type that reads like one only as text', { type: true }],
    ['a type-less body', { message: 'no' }],
    ['JSON null', null],
    ['a body that is not JSON', new SyntaxError('Unexpected token')],
  ])('reads nothing from %s', (_case, json) => {
    expect(errorTypeIn(body(json))).toBeUndefined();
  });
});
