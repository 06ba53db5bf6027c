/** Which parts of a credential an upstream's error type must not repeat, down to the odd cases. */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { basicAuthorization } from '../../src/upstream/credentials.js';
import { forgetEchoedCredentials } from '../../src/upstream/error-type.js';

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
  ])('is dropped: %s', (_case, type, sent) => {
    expect(kept(type, sent)).toBeUndefined();
  });

  it.each([
    ['a Basic credential with an empty password', [basicAuthorization('someone', '')]],
    ['a Basic credential without a colon', [`Basic ${btoa('someone')}`]],
    ['an empty bearer token', ['Bearer ']],
    ['nothing sent', [undefined]],
  ])('is kept when nothing of it is repeated: %s', (_case, sent) => {
    expect(kept('invalid_client', sent)).toBe('invalid_client');
  });

  it('leaves an error without a type as it is', () => {
    const error = new UpstreamError('UPSTREAM_UNAVAILABLE', 'identity', 'x', { route: 'r' });
    forgetEchoedCredentials(error, ['anything']);
    expect(error.detail).toEqual({ service: 'identity', route: 'r' });
  });
});
