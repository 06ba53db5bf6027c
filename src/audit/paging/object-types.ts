/** The upstream matches objectType case-sensitively: a known type in another case (`login`) would match nothing. */
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

export function checkObjectTypeCase(objectType: string | null | undefined, argument: string): void {
  if (objectType === null || objectType === undefined || TYPE_NAME_BY_OBJECT_TYPE.has(objectType)) return;
  const meant = KNOWN_BY_FOLDED_CASE.get(objectType.toLowerCase());
  if (meant !== undefined) {
    throw new BadUserInputError(`\`${argument}\` is case-sensitive and matches no record in this case: did you mean ${meant}?`);
  }
}
