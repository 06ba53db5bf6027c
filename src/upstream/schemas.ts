/** Bounds every upstream answer is held to, whichever service sends it. */
import { z } from 'zod';

/** Access and refresh tokens (a JWT is a few KB). */
export const MAX_TOKEN_LENGTH = 16 * 1024;
/** Session ids are opaque but short (a vAPI one is 32 hex digits). */
export const MAX_SESSION_ID_LENGTH = 1024;

/** A credential goes back out in a header: one no header can carry would fail every later call. */
export function credentialValue(maxLength: number) {
  return z
    .string()
    .min(1)
    .max(maxLength, { abort: true })
    .regex(/^[\x21-\x7E]+$/, { message: 'not sendable in an HTTP header (visible ASCII without spaces only)' });
}

export const DEEPER = -1;

/** The JSON values in `value`, itself included; stops once past `room`, or with DEEPER past `depth` levels. */
export function countValues(value: unknown, depth: number, room = Infinity): number {
  if (typeof value !== 'object' || value === null) return 1;
  if (depth === 0) return DEEPER;
  let count = 1;
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    const inner = countValues(fields[key], depth - 1, room - count);
    if (inner === DEEPER) return DEEPER;
    count += inner;
    if (count > room) return count;
  }
  return count;
}
