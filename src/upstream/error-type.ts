/**
 * The error type of a refused request (`type` of vAPI, `error` of OAuth): it decides whether a 404
 * means "not found", and is all the log keeps of the body. An upstream may echo what it was sent:
 * only a type that looks like one is read, and one that repeats a credential of the call is dropped.
 */
import type { UpstreamError } from '../lib/errors.js';

/** An OAuth error code (`invalid_client`) or a vAPI type (`com.vmware.vapi.std.errors.not_found`). */
const ERROR_TYPE = /^[A-Za-z][\w.-]{0,119}$/;

export function errorTypeIn(text: string): string | undefined {
  let json: { error?: unknown; type?: unknown } | null;
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    return undefined;
  }
  const type = json?.type ?? json?.error;
  return typeof type === 'string' && ERROR_TYPE.test(type) ? type : undefined;
}

/** A type sharing this many characters in a row with a credential repeats part of it. */
const ECHO_RUN = 8;

/** Drops the error's upstream error type when it repeats a credential its call sent, or ECHO_RUN characters of one. */
export function forgetEchoedCredentials(error: UpstreamError, sent: Iterable<string | undefined>): void {
  const detail = error.detail!;
  const type = detail['upstreamError'];
  if (typeof type !== 'string') return;
  for (const value of sent) {
    if (value !== undefined && credentialPieces(value).some((piece) => piece !== '' && repeats(type, piece))) {
      delete detail['upstreamError'];
      return;
    }
  }
}

function repeats(type: string, piece: string): boolean {
  if (type.includes(piece)) return true;
  for (let start = 0; start + ECHO_RUN <= type.length; start++) {
    if (piece.includes(type.slice(start, start + ECHO_RUN))) return true;
  }
  return false;
}

/** The value, the credential after its scheme (`Bearer x`, `Basic x`), and a Basic credential's user and password. */
function credentialPieces(value: string): string[] {
  const space = value.indexOf(' ');
  if (space < 0) return [value];
  const credential = value.slice(space + 1);
  if (value.slice(0, space).toLowerCase() !== 'basic') return [value, credential];
  const [user, ...password] = Buffer.from(credential, 'base64').toString().split(':');
  return [value, credential, user!, password.join(':')];
}
