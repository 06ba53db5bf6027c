/**
 * A credential an upstream hands out (token, session id) goes back out on every later call: one no
 * header can carry would fail each call before anything is sent, and no 401 would ever drop it.
 */
import { z } from 'zod';

/** Visible ASCII without spaces (RFC 6750's b64token is a subset). */
const SENDABLE = /^[\x21-\x7E]+$/;

/** Access and refresh tokens (a JWT is a few KB). */
export const MAX_TOKEN_LENGTH = 16 * 1024;
/** Session ids are opaque but short (a vAPI one is 32 hex digits). */
export const MAX_SESSION_ID_LENGTH = 1024;

export function credentialValue(maxLength: number) {
  // Too long ends the check: no pattern run over megabytes.
  return z
    .string()
    .min(1)
    .max(maxLength, { abort: true })
    .regex(SENDABLE, { message: 'not sendable in an HTTP header (visible ASCII without spaces only)' });
}
