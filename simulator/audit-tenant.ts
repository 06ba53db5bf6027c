/** The seeded population of one tenant: users, admins, applications, groups, workspaces. */
import { chance, intBetween, mulberry32, pick, seededUuid, type Random } from './random.js';
import { APPLICATIONS, DOMAINS, FIRST_NAMES, GROUPS, LAST_NAMES } from './audit-vocabulary.js';

export interface UserActor {
  readonly id: number;
  readonly userName: string;
  readonly domain: string;
  readonly uuid: string;
  readonly externalId: string | null;
}

export interface NamedObject {
  readonly name: string;
  readonly uuid: string;
}

export interface Tenant {
  readonly users: readonly UserActor[];
  /** Users who change configuration; the first is `admin (System Domain)` as in the sample. */
  readonly admins: readonly UserActor[];
  readonly applications: readonly NamedObject[];
  readonly groups: readonly NamedObject[];
  readonly syncProfiles: readonly NamedObject[];
  readonly workspaces: readonly string[];
}

const USER_COUNT = 240;
const ADMIN_COUNT = 6;

/** The population depends on the seed only, so seeded and inserted events share it. */
export function createTenant(seed: number): Tenant {
  const rand = mulberry32(seed ^ 0x5eed5eed);
  const users: UserActor[] = [
    { id: 2, userName: 'admin', domain: 'System Domain', uuid: seededUuid(rand), externalId: null },
  ];
  const taken = new Set(['admin']);
  while (users.length < USER_COUNT) {
    const userName = uniqueUserName(rand, taken);
    users.push({
      id: 1000 + users.length * 7 + intBetween(rand, 0, 6),
      userName,
      domain: pick(rand, DOMAINS.slice(0, 3)),
      uuid: seededUuid(rand),
      externalId: chance(rand, 0.85) ? seededUuid(rand) : null,
    });
  }
  return {
    users,
    admins: users.slice(0, ADMIN_COUNT),
    applications: APPLICATIONS.map((name) => ({ name, uuid: seededUuid(rand) })),
    groups: GROUPS.map((name) => ({ name, uuid: seededUuid(rand) })),
    syncProfiles: ['corp.example.com', 'emea.example.com'].map((name) => ({ name, uuid: seededUuid(rand) })),
    workspaces: [seededUuid(rand), seededUuid(rand), seededUuid(rand)],
  };
}

function uniqueUserName(rand: Random, taken: Set<string>): string {
  for (;;) {
    const base = `${pick(rand, FIRST_NAMES)}.${pick(rand, LAST_NAMES)}`;
    const name = taken.has(base) ? `${base}${intBetween(rand, 2, 99)}` : base;
    if (!taken.has(name)) {
      taken.add(name);
      return name;
    }
  }
}
