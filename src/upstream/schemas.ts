/**
 * The zod model both services' answers share: a credential an upstream hands out (access token,
 * refresh token, session id). It goes back out on every later call, so it must fit there: a value
 * with CR/LF, a space or a character beyond ASCII makes each call fail inside the HTTP client
 * before anything is sent (no 401 ever comes back to drop it), and one of megabytes is copied into
 * every request.
 */
import { z } from 'zod';

/** Visible ASCII without spaces: what a header carries as it is (RFC 6750's b64token is a subset). */
const SENDABLE = /^[\x21-\x7E]+$/;

/** Access and refresh tokens: a JWT is a few KB; 16 KB is generous. */
export const MAX_TOKEN_LENGTH = 16 * 1024;
/** Session ids are opaque but short (a vAPI one is 32 hex digits). */
export const MAX_SESSION_ID_LENGTH = 1024;

export function credentialValue(maxLength: number) {
  return (
    z
      .string()
      .min(1)
      // Too long ends the check: no pattern run over megabytes.
      .max(maxLength, { abort: true })
      .regex(SENDABLE, { message: 'not sendable in an HTTP header (visible ASCII without spaces only)' })
  );
}
