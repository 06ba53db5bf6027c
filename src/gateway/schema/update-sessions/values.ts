/** The content library's loose values as the contract's strict ones; an unrepresentable one throws on its field. */
import { BadUserInputError, UpstreamError } from '../../../lib/errors.js';

const TRANSFER_STATUSES = ['WAITING_FOR_TRANSFER', 'TRANSFERRING', 'READY', 'VALIDATING', 'ERROR'] as const;
const TRANSFER_SOURCE_TYPES = ['NONE', 'PUSH', 'PULL'] as const;
const CHECKSUM_ALGORITHMS = ['SHA1', 'MD5', 'SHA256', 'SHA512'] as const;
/** Longest update session id sent upstream; real ids are UUIDs, far shorter. */
export const MAX_SESSION_ID_LENGTH = 1024;

/** The upstream's value goes to the log (detail), never into the message. */
function invalid(what: string, value: unknown): never {
  throw new UpstreamError(
    'UPSTREAM_INVALID_RESPONSE',
    'content-library',
    `The content library service sent ${what} this gateway cannot represent.`,
    { value: typeof value === 'string' ? value.slice(0, 200) : value },
  );
}

/** Upper-casing tolerates a server that changes case; the spec's values are all upper case. */
const oneOf = <T extends string>(allowed: readonly T[], value: string) =>
  allowed.find((candidate) => candidate === value.trim().toUpperCase());

/** For fields nullable in the contract: unset stays null; a value `read` refuses throws (null + an error entry). */
const nullOr =
  <T, R>(what: string, read: (value: T) => R | undefined) =>
  (value: T | null | undefined): R | null =>
    value == null ? null : (read(value) ?? invalid(what, value));

export const transferStatus = nullOr('a file status', (value: string) => oneOf(TRANSFER_STATUSES, value));

/** Undefined when unknown: non-null in the contract, the field reads NONE (an error would null the whole list). */
export const transferSourceType = (value: string) => oneOf(TRANSFER_SOURCE_TYPES, value);

/** Unset (or empty) means SHA1 (spec 2.4); `SHA-256`/`sha_256` are read too. Unknown: ChecksumInfo is null. */
export function checksumAlgorithm(value: string | null | undefined) {
  if (value == null || value.trim() === '') return 'SHA1';
  return oneOf(CHECKSUM_ALGORITHMS, value.replace(/[-_\s]/g, '')) ?? invalid('a checksum algorithm', value);
}

/** The uri's scheme (RFC 3986), lower-cased; a regex, not `new URL`, so odd but harmless uris still give theirs. */
export function uriScheme(uri: string): string {
  const scheme = /^\s*([a-z][a-z\d+.-]*):/i.exec(uri)?.[1];
  return scheme ? scheme.toLowerCase() : invalid('an endpoint uri without a scheme', uri);
}

export const upstreamDateTime = nullOr('a date-time', (value: string) => {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
});

/** GraphQL Int is 32-bit; a larger value would otherwise fail as an unexplained internal error. */
export const upstreamInt32 = nullOr('a number outside the 32-bit range', (value: number) =>
  (value | 0) === value ? value : undefined,
);

export const upstreamSafeInt = nullOr('an integer outside the safe range', (value: number) =>
  Number.isSafeInteger(value) ? value : undefined,
);

/** An empty, blank or overlong id (only a 414/431 would come back) never reaches the upstream. */
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
