/**
 * Builds audit records that look like a real tenant's: every documented type plus undocumented
 * ones, Action and Audit records, users, system services and system events.
 */
import type { AuditRecordData } from './types.js';
import { chance, intBetween, pick, seededUuid, weightedPick, type Random } from './random.js';
import type { Tenant, UserActor } from './audit-tenant.js';
import {
  AUTH_METHODS,
  DEVICES,
  LAUNCH_ERRORS,
  LAUNCH_FAILURES,
  LOGIN_ERRORS,
  LOGIN_FAILURES,
  OAUTH_CLIENTS,
  RESOURCE_TYPES,
  RULE_SETS,
  SYSTEM_SERVICES,
  TENANT,
} from './audit-vocabulary.js';

/** How often each type occurs; the list includes types the reference never names. */
export const TYPE_WEIGHTS: readonly (readonly [string, number])[] = [
  ['LOGIN', 400],
  ['LAUNCH', 250],
  ['LOGOUT', 40],
  ['LOGIN_ERROR', 30],
  ['LAUNCH_ERROR', 20],
  ['Group', 60],
  ['AppEntitlement', 60],
  ['User', 50],
  ['DyrectorySyncProfile', 30],
  ['DirectorySyncProfile', 10],
  ['RuleSet', 20],
  ['OAuth2Client', 15],
  ['Application', 10],
  ['Tenant', 5],
];

export const OBJECT_ACTIONS = ['CREATE', 'UPDATE', 'DELETE', 'LINK', 'UNLINK'] as const;

/** Upper-case types are Action records (the type is the action); mixed-case ones are Audit records. */
export function isActionType(objectType: string): boolean {
  return /^[A-Z0-9_]+$/.test(objectType);
}

interface Actor {
  readonly actorId: number | null;
  readonly actorUserName: string | null;
  readonly actorDomain: string | null;
  readonly actorUuid: string | null;
}

interface Details {
  readonly actor: Actor;
  readonly device: string | null;
  readonly clientId?: string | null;
  readonly objectId: string | null;
  readonly objectName: string | null;
  readonly objectAction?: string;
  readonly values: Record<string, unknown>;
}

const SYSTEM_EVENT: Actor = { actorId: null, actorUserName: null, actorDomain: null, actorUuid: null };

export interface EventFactory {
  /** A new record of `objectType` (a weighted random type when omitted) at `timestamp`. */
  create(timestamp: number, objectType?: string): AuditRecordData;
}

export function createEventFactory(tenant: Tenant, rand: Random): EventFactory {
  const asActor = (u: UserActor): Actor => ({
    actorId: u.id,
    actorUserName: u.userName,
    actorDomain: u.domain,
    actorUuid: u.uuid,
  });
  const service = (): Actor => ({ ...SYSTEM_EVENT, actorUserName: pick(rand, SYSTEM_SERVICES) });
  const anyUser = () => pick(rand, tenant.users);
  const admin = () => asActor(pick(rand, tenant.admins));
  /** Configuration changes: mostly admins, some services, some system events. */
  const changer = (serviceShare: number, systemShare: number): Actor => {
    const roll = rand();
    if (roll < systemShare) return SYSTEM_EVENT;
    if (roll < systemShare + serviceShare) return service();
    return admin();
  };
  const browser = () => pick(rand, DEVICES.slice(0, 5)).agent;
  const action = (weights: readonly number[]) =>
    weightedPick(rand, OBJECT_ACTIONS.map((a, i) => [a, weights[i] ?? 0] as const));

  const builders: Record<string, () => Details> = {
    LOGIN: () => {
      const user = anyUser();
      const device = pick(rand, DEVICES);
      const success = chance(rand, 0.88);
      return {
        actor: asActor(user),
        device: device.agent,
        clientId: chance(rand, 0.7) ? null : pick(rand, OAUTH_CLIENTS),
        objectId: null,
        objectName: null,
        values: {
          deviceType: device.deviceType,
          success: String(success),
          authMethods: weightedPick(rand, AUTH_METHODS),
          actorExternalId: user.externalId,
          ...(success ? {} : { failureMessage: pick(rand, LOGIN_FAILURES) }),
        },
      };
    },
    LOGOUT: () => {
      const device = pick(rand, DEVICES);
      return { actor: asActor(anyUser()), device: device.agent, objectId: null, objectName: null, values: { deviceType: device.deviceType } };
    },
    LAUNCH: () => {
      const app = pick(rand, tenant.applications);
      const success = chance(rand, 0.94);
      return {
        actor: asActor(anyUser()),
        device: pick(rand, DEVICES).agent,
        objectId: app.uuid,
        objectName: app.name,
        values: {
          success: String(success),
          resourceType: pick(rand, RESOURCE_TYPES),
          ...(success ? {} : { failureMessage: pick(rand, LAUNCH_FAILURES) }),
        },
      };
    },
    LOGIN_ERROR: () => ({
      actor: chance(rand, 0.75) ? asActor(anyUser()) : SYSTEM_EVENT,
      device: pick(rand, DEVICES).agent,
      objectId: null,
      objectName: null,
      values: { failureMessage: pick(rand, LOGIN_ERRORS), authMethods: weightedPick(rand, AUTH_METHODS) },
    }),
    LAUNCH_ERROR: () => {
      const app = chance(rand, 0.5) ? pick(rand, tenant.applications) : null;
      return {
        actor: asActor(anyUser()),
        device: pick(rand, DEVICES).agent,
        objectId: app?.uuid ?? null,
        objectName: app?.name ?? null,
        values: { failureMessage: pick(rand, LAUNCH_ERRORS) },
      };
    },
    Group: () => {
      const group = pick(rand, tenant.groups);
      const objectAction = action([1, 3, 1, 4, 2]);
      const linking = objectAction === 'LINK' || objectAction === 'UNLINK';
      return {
        actor: changer(0.2, 0.1),
        device: browser(),
        objectId: group.uuid,
        objectName: group.name,
        objectAction,
        values: linking
          ? { memberUserName: anyUser().userName, memberCount: intBetween(rand, 1, 4000) }
          : { groupType: chance(rand, 0.7) ? 'DIRECTORY' : 'LOCAL' },
      };
    },
    AppEntitlement: () => {
      const app = pick(rand, tenant.applications);
      const toGroup = chance(rand, 0.6);
      const subject = toGroup ? pick(rand, tenant.groups).name : anyUser().userName;
      return {
        actor: changer(0.1, 0.05),
        device: browser(),
        objectId: `${app.uuid}:${seededUuid(rand).slice(0, 8)}`,
        objectName: app.name,
        objectAction: action([3, 1, 2, 3, 2]),
        values: {
          subjectType: toGroup ? 'GROUP' : 'USER',
          subjectName: subject,
          activationPolicy: chance(rand, 0.8) ? 'AUTOMATIC' : 'USER_ACTIVATED',
        },
      };
    },
    User: () => {
      const target = anyUser();
      const objectAction = action([2, 6, 1, 0, 0]);
      return {
        actor: changer(0.45, 0.15),
        device: null,
        objectId: String(target.id),
        objectName: target.userName,
        objectAction,
        values:
          objectAction === 'UPDATE'
            ? { changedAttributes: pick(rand, [['email'], ['firstName', 'lastName'], ['manager'], ['disabled']]) }
            : { source: chance(rand, 0.8) ? 'DIRECTORY_SYNC' : 'ADMIN_CONSOLE' },
      };
    },
    RuleSet: () => {
      const id = pick(rand, RULE_SETS);
      return {
        actor: changer(0.1, 0),
        device: browser(),
        objectId: id,
        objectName: id.replace(/_/g, ' '),
        objectAction: action([1, 8, 1, 0, 0]),
        values: { rulesCount: intBetween(rand, 1, 12) },
      };
    },
    OAuth2Client: () => {
      const id = pick(rand, OAUTH_CLIENTS);
      return {
        actor: admin(),
        device: browser(),
        objectId: id,
        objectName: id,
        objectAction: action([1, 5, 1, 0, 0]),
        values: { grantTypes: 'client_credentials refresh_token', accessTokenTTLMinutes: pick(rand, [60, 180, 360]) },
      };
    },
    Application: () => {
      const app = pick(rand, tenant.applications);
      return {
        actor: admin(),
        device: browser(),
        objectId: app.uuid,
        objectName: app.name,
        objectAction: action([1, 6, 1, 2, 0]),
        values: { resourceType: pick(rand, RESOURCE_TYPES) },
      };
    },
    Tenant: () => ({
      actor: changer(0, 0.3),
      device: browser(),
      objectId: TENANT.tenantId,
      objectName: TENANT.tenantId,
      objectAction: 'UPDATE',
      values: { setting: 'sessionTimeoutHours', oldValue: '8', newValue: String(intBetween(rand, 1, 12)) },
    }),
  };
  const directorySync = (): Details => {
    const profile = pick(rand, tenant.syncProfiles);
    return {
      actor: changer(0.5, 0.4),
      device: null,
      objectId: profile.uuid,
      objectName: profile.name,
      objectAction: action([1, 18, 1, 0, 0]),
      values: {
        usersAdded: intBetween(rand, 0, 40),
        usersUpdated: intBetween(rand, 0, 400),
        usersDeleted: intBetween(rand, 0, 5),
        groupsAdded: intBetween(rand, 0, 3),
        syncStatus: chance(rand, 0.95) ? 'SUCCESS' : 'FAILED',
      },
    };
  };
  builders['DyrectorySyncProfile'] = directorySync;
  builders['DirectorySyncProfile'] = directorySync;

  /** A type nobody listed: plausible actor and object, no details. */
  const generic = (objectType: string): Details =>
    isActionType(objectType)
      ? { actor: asActor(anyUser()), device: pick(rand, DEVICES).agent, objectId: null, objectName: null, values: {} }
      : {
          actor: changer(0.2, 0.1),
          device: browser(),
          objectId: seededUuid(rand),
          objectName: `${objectType} ${intBetween(rand, 1, 99)}`,
          objectAction: action([1, 1, 1, 1, 1]),
          values: {},
        };

  return {
    create(timestamp, objectType = weightedPick(rand, TYPE_WEIGHTS)) {
      const d = builders[objectType]?.() ?? generic(objectType);
      const audit = !isActionType(objectType);
      const user = d.actor.actorId !== null;
      return {
        baseType: audit ? 'Audit' : 'Action',
        uuid: seededUuid(rand),
        timestamp,
        organizationId: TENANT.organizationId,
        tenantId: TENANT.tenantId,
        ...d.actor,
        clientId: d.clientId ?? null,
        // Services and system events act without a browser.
        deviceId: user || !audit ? d.device : null,
        workspaceId: user && chance(rand, 0.2) ? pick(rand, tenant.workspaces) : null,
        sourceIp: user ? randomIp(rand) : `10.20.0.${intBetween(rand, 2, 30)}`,
        objectType,
        objectId: d.objectId,
        objectName: d.objectName,
        ...(audit ? { objectAction: d.objectAction ?? 'UPDATE' } : {}),
        values: d.values,
      };
    },
  };
}

function randomIp(rand: Random): string {
  const roll = rand();
  if (roll < 0.5) return `10.${intBetween(rand, 0, 255)}.${intBetween(rand, 0, 255)}.${intBetween(rand, 1, 254)}`;
  if (roll < 0.7) return `192.168.${intBetween(rand, 0, 255)}.${intBetween(rand, 1, 254)}`;
  if (roll < 0.85) return `203.0.113.${intBetween(rand, 1, 254)}`;
  return `198.51.100.${intBetween(rand, 1, 254)}`;
}
