/**
 * Turns the content library's loosely typed values into the contract's strict ones.
 * Pure functions, no GraphQL: a value that cannot be represented throws an UpstreamError
 * UPSTREAM_INVALID_RESPONSE, which GraphQL reports on that one (nullable) field only.
 */
import { BadUserInputError, UpstreamError } from '../../../lib/errors.js';

export const TRANSFER_STATUSES = ['WAITING_FOR_TRANSFER', 'TRANSFERRING', 'READY', 'VALIDATING', 'ERROR'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

export const TRANSFER_SOURCE_TYPES = ['NONE', 'PUSH', 'PULL'] as const;
export type TransferSourceType = (typeof TRANSFER_SOURCE_TYPES)[number];

export const CHECKSUM_ALGORITHMS = ['SHA1', 'MD5', 'SHA256', 'SHA512'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

/** The spec's default when checksum_info.algorithm is unset. */
export const DEFAULT_CHECKSUM_ALGORITHM: ChecksumAlgorithm = 'SHA1';

/**
 * The upstream's value goes to the log (detail), never into the message: messages never carry
 * upstream bodies.
 */
export function invalidUpstreamValue(what: string, value: unknown): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_INVALID_RESPONSE',
    'content-library',
    `The content library service sent ${what} this gateway cannot represent.`,
    { value: typeof value === 'string' ? value.slice(0, 200) : value },
  );
}

function oneOf<T extends string>(allowed: readonly T[], value: string): T | undefined {
  // Upper-casing tolerates a server that changes case; the spec's values are all upper case.
  const normalized = value.trim().toUpperCase();
  return allowed.find((candidate) => candidate === normalized);
}

/** Nullable in the contract: unset stays null; an unknown value throws (null + an error entry). */
export function transferStatus(value: string | null | undefined): TransferStatus | null {
  if (value == null) return null;
  return oneOf(TRANSFER_STATUSES, value) ?? throwError(invalidUpstreamValue('a file status', value));
}

/**
 * Non-null in the contract, so an unknown value cannot be an error without nulling the file, and
 * with it the whole `[UpdateSessionFile!]` list. It reads NONE instead (nothing a client can act on);
 * `upstreamSourceType` keeps the verbatim value and the resolver logs a warning.
 */
export function transferSourceType(value: string): { type: TransferSourceType; known: boolean } {
  const known = oneOf(TRANSFER_SOURCE_TYPES, value);
  return known ? { type: known, known: true } : { type: 'NONE', known: false };
}

/**
 * Unset (or empty) means SHA1 (spec 2.4). Also accepts the spelled-out forms `SHA-256`/`sha_256`.
 * An unknown algorithm throws: ChecksumInfo is then null with an error entry, the file intact.
 */
export function checksumAlgorithm(value: string | null | undefined): ChecksumAlgorithm {
  if (value == null || value.trim() === '') return DEFAULT_CHECKSUM_ALGORITHM;
  return (
    oneOf(CHECKSUM_ALGORITHMS, value.replace(/[-_\s]/g, '')) ??
    throwError(invalidUpstreamValue('a checksum algorithm', value))
  );
}

/** RFC 3986 scheme: a letter, then letters, digits, `+`, `-`, `.`; ends at the first `:`. */
const SCHEME = /^\s*([a-z][a-z\d+.-]*):/i;

/**
 * The uri's scheme, lower-cased: `https://h/x` -> https, `ds:///vmfs/volumes/ds1/a.iso` -> ds,
 * `file:///tmp/a.ova` -> file. A plain regex, not `new URL`, so odd but harmless uris
 * (spaces, unencoded characters) still give their scheme. No scheme at all throws.
 */
export function uriScheme(uri: string): string {
  const scheme = SCHEME.exec(uri)?.[1];
  return scheme ? scheme.toLowerCase() : throwError(invalidUpstreamValue('an endpoint uri without a scheme', uri));
}

/** ISO-8601 from the upstream as a Date (the DateTime scalar prints it as UTC with milliseconds). */
export function upstreamDateTime(value: string | null | undefined): Date | null {
  if (value == null) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? throwError(invalidUpstreamValue('a date-time', value)) : date;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** GraphQL Int is 32-bit; a larger value would otherwise fail as an unexplained internal error. */
export function upstreamInt32(value: number | null | undefined): number | null {
  if (value == null) return null;
  return Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX
    ? value
    : throwError(invalidUpstreamValue('a number outside the 32-bit range', value));
}

export function upstreamSafeInt(value: number | null | undefined): number | null {
  if (value == null) return null;
  return Number.isSafeInteger(value) ? value : throwError(invalidUpstreamValue('an integer outside the safe range', value));
}

/** Longest update session id sent upstream; real ids are UUIDs, far shorter. */
export const MAX_SESSION_ID_LENGTH = 1024;

/**
 * An empty, blank or overlong id never reaches the upstream (a long one would only come back as
 * 414/431). The id itself is passed on verbatim.
 */
export function requireSessionId(value: unknown, argument: string): string {
  const id = typeof value === 'number' ? String(value) : value;
  if (typeof id !== 'string' || id.trim() === '') {
    throw new BadUserInputError(`${argument} must be a non-empty update session id.`);
  }
  if (id.length > MAX_SESSION_ID_LENGTH) {
    throw new BadUserInputError(`${argument} must be at most ${MAX_SESSION_ID_LENGTH} characters long.`);
  }
  return id;
}

function throwError(error: Error): never {
  throw error;
}
