/** AuditRecord, one type per known objectType, and their union; every parent is the parsed record itself. */
import type { FieldMap } from '@pothos/core';
import type { AuditRecord } from '../../../upstream/identity/schemas.js';
import { builder, type InterfaceFields, type ObjectFields } from '../builder.js';
import { TYPE_NAME_BY_OBJECT_TYPE } from '../../../audit/paging/object-types.js';

const AuditBaseTypeEnum = builder.enumType('AuditBaseType', {
  description: 'Whether a record reports a change to stored data or an action.',
  values: {
    AUDIT: { value: 'Audit', description: 'Changes to stored data (upstream `Audit`).' },
    ACTION: { value: 'Action', description: 'Not directly tied to a data change (upstream `Action`).' },
  } as const,
});

/** The record is its own actor: no allocation per row, null for system events. */
const AuditActorRef = builder.objectRef<AuditRecord>('AuditActor').implement({
  description: 'Who caused the event: a user or a system service.',
  fields: (t) => ({
    id: t.expose('actorId', { type: 'SafeInt', nullable: true, description: 'User id.' }),
    userName: t.exposeString('actorUserName', { nullable: true, description: 'User name or system service name.' }),
    domain: t.exposeString('actorDomain', { nullable: true, description: "The actor's domain." }),
    uuid: t.exposeString('actorUuid', { nullable: true, description: "The actor's UUID." }),
  }),
});

type RecordFields = ObjectFields<AuditRecord>;
type CommonFields = InterfaceFields<AuditRecord>;

const optionalText = (t: CommonFields, name: Parameters<CommonFields['exposeString']>[0], description: string) =>
  t.exposeString(name, { nullable: true, description });

const isSystemEvent = (r: AuditRecord) =>
  r.actorId == null && r.actorUserName == null && r.actorDomain == null && r.actorUuid == null;

const auditEventTypeName = (record: AuditRecord) => TYPE_NAME_BY_OBJECT_TYPE.get(record.objectType) ?? 'OtherAuditEvent';

const AuditRecordInterface = builder.interfaceRef<AuditRecord>('AuditRecord').implement({
  description: 'The fields every audit record has.',
  resolveType: auditEventTypeName,
  fields: (t) => ({
    uuid: t.exposeID('uuid', { description: 'Unique id of the record (a UUID): the cache key of every event type.' }),
    baseType: t.expose('baseType', { type: AuditBaseTypeEnum, description: 'A data change (AUDIT) or an action (ACTION).' }),
    timestamp: t.expose('timestamp', { type: 'DateTime', description: 'When it happened (millisecond precision).' }),
    organizationId: t.expose('organizationId', { type: 'SafeInt', nullable: true, description: 'Numeric id of the tenant.' }),
    tenantId: optionalText(t, 'tenantId', "Tenant id: the host-name prefix of the tenant's address."),
    actor: t.field({
      type: AuditActorRef,
      nullable: true,
      description: 'Null for system events.',
      resolve: (r) => (isSystemEvent(r) ? null : r),
    }),
    clientId: optionalText(t, 'clientId', 'The OAuth client the request came through, when known.'),
    deviceId: optionalText(t, 'deviceId', 'The user agent, in the records seen so far.'),
    workspaceId: optionalText(t, 'workspaceId', 'The workspace of the event, when known.'),
    sourceIp: optionalText(t, 'sourceIp', 'IP address of the requesting machine.'),
    objectType: t.exposeString('objectType', { description: 'Upstream objectType, verbatim.' }),
    objectId: optionalText(t, 'objectId', 'Internal id of the affected object; its format depends on the object.'),
    objectName: optionalText(t, 'objectName', 'Name of the affected object (a user, application, configuration or tenant).'),
    objectAction: optionalText(t, 'objectAction', 'Set on AUDIT records, e.g. UPDATE; null on ACTION records.'),
    values: t.expose('values', { type: 'JSON', description: "The record's type-dependent values, verbatim." }),
  }),
});

/** `values.success`: the string "true"/"false" as the upstream sends it, or a real boolean; else null. */
export function booleanValue(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : null;
  return text === 'true' ? true : text === 'false' ? false : null;
}

export const stringValue = (value: unknown) => (typeof value === 'string' ? value : null);

/** `values.authMethods` split at top-level commas: a label may hold some in parentheses ("SecurID (Token, PIN)"). */
export function authMethodLabels(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  const labels: string[] = [];
  let depth = 0;
  let from = 0;
  for (const { 0: c, index } of value.matchAll(/[(),]/g)) {
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) {
      labels.push(value.slice(from, index));
      from = index + 1;
    }
  }
  labels.push(value.slice(from));
  return labels.map((label) => label.trim()).filter((label) => label.length > 0);
}

const VALUE_DESCRIPTIONS = {
  deviceType: 'values.deviceType, verbatim.',
  actorExternalId: "values.actorExternalId: the actor's id in an external identity provider.",
  failureMessage: 'values.failureMessage: why the attempt failed; null when it succeeded.',
  resourceType: 'values.resourceType: the type of the application launched.',
} as const;

const valueString = (t: RecordFields, key: keyof typeof VALUE_DESCRIPTIONS) =>
  t.string({ nullable: true, description: VALUE_DESCRIPTIONS[key], resolve: (r) => stringValue(r.values[key]) });

const valueSuccess = (t: RecordFields) =>
  t.boolean({
    nullable: true,
    description: 'values.success as a boolean; null when absent or unreadable.',
    resolve: (r) => booleanValue(r.values['success']),
  });

const auditEventType = (name: string, description: string, fields: (t: RecordFields) => FieldMap = () => ({})) =>
  builder.objectRef<AuditRecord>(name).implement({ description, interfaces: [AuditRecordInterface], fields });

export const AuditEventUnion = builder.unionType('AuditEvent', {
  description: 'One member per known upstream objectType; OtherAuditEvent carries every other type.',
  types: [
    auditEventType('LoginEvent', 'objectType LOGIN: a sign-in attempt.', (t) => ({
      success: valueSuccess(t),
      authMethods: t.stringList({
        description: 'values.authMethods split into its labels; empty when absent.',
        resolve: (r) => authMethodLabels(r.values['authMethods']),
      }),
      deviceType: valueString(t, 'deviceType'),
      actorExternalId: valueString(t, 'actorExternalId'),
      failureMessage: valueString(t, 'failureMessage'),
    })),
    auditEventType('LaunchEvent', 'objectType LAUNCH: an application launch.', (t) => ({
      success: valueSuccess(t),
      failureMessage: valueString(t, 'failureMessage'),
      resourceType: valueString(t, 'resourceType'),
    })),
    auditEventType('LoginErrorEvent', 'objectType LOGIN_ERROR: a login failure caused by configuration or a system error.', (t) => ({
      failureMessage: valueString(t, 'failureMessage'),
    })),
    auditEventType(
      'LaunchErrorEvent',
      'objectType LAUNCH_ERROR: an invalid launch request, or a resource that could not be determined.',
      (t) => ({ failureMessage: valueString(t, 'failureMessage') }),
    ),
    auditEventType('GroupEvent', 'objectType Group: group activity.'),
    auditEventType('AppEntitlementEvent', 'objectType AppEntitlement: which applications are entitled to which groups and users.'),
    auditEventType(
      'DirectorySyncProfileEvent',
      'objectType DyrectorySyncProfile (the spelling the upstream documents) or DirectorySyncProfile.',
    ),
    auditEventType('OtherAuditEvent', 'Any objectType without a type of its own.'),
  ],
  resolveType: auditEventTypeName,
});
