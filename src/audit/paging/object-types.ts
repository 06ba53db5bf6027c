/**
 * The upstream objectTypes that have a record type, and the check for one spelt in another case: the
 * upstream matches case-sensitively, so `login` would match nothing. Other values pass through.
 */
import { BadUserInputError } from '../../lib/errors.js';

/** Upstream objectType (case-sensitive) -> GraphQL type; every other type is OtherAuditEvent. */
export const TYPE_NAME_BY_OBJECT_TYPE: ReadonlyMap<string, string> = new Map([
  ['LOGIN', 'LoginEvent'],
  ['LAUNCH', 'LaunchEvent'],
  ['LOGIN_ERROR', 'LoginErrorEvent'],
  ['LAUNCH_ERROR', 'LaunchErrorEvent'],
  ['Group', 'GroupEvent'],
  ['AppEntitlement', 'AppEntitlementEvent'],
  // The spec's spelling, and the correct one some tenants send.
  ['DyrectorySyncProfile', 'DirectorySyncProfileEvent'],
  ['DirectorySyncProfile', 'DirectorySyncProfileEvent'],
]);

const KNOWN_BY_FOLDED_CASE: ReadonlyMap<string, string> = new Map(
  [...TYPE_NAME_BY_OBJECT_TYPE.keys()].map((known) => [known.toLowerCase(), known]),
);

/** Refuses a known objectType in the wrong case with BAD_USER_INPUT naming the right spelling. */
export function checkObjectTypeCase(objectType: string | null | undefined, argument: string): void {
  if (objectType === null || objectType === undefined || TYPE_NAME_BY_OBJECT_TYPE.has(objectType)) return;
  const meant = KNOWN_BY_FOLDED_CASE.get(objectType.toLowerCase());
  if (meant !== undefined) {
    throw new BadUserInputError(`\`${argument}\` is case-sensitive and matches no record in this case: did you mean ${meant}?`);
  }
}
