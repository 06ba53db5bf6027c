/**
 * The built schema contains the auditEvents part of the public contract with the same names,
 * types, arguments, enum values, union members and nullability (it may add, never change or drop).
 */
import {
  buildSchema,
  findBreakingChanges,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  type GraphQLField,
  type GraphQLNamedType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';

// The contract's record fields, shared by the interface and every member (descriptions left out).
const RECORD = `
  uuid: ID!
  baseType: AuditBaseType!
  timestamp: DateTime!
  organizationId: SafeInt
  tenantId: String
  actor: AuditActor
  clientId: String
  deviceId: String
  workspaceId: String
  sourceIp: String
  objectType: String!
  objectId: String
  objectName: String
  objectAction: String
  values: JSON!
`;

// Copied from the contract's schema.graphql, audit part only.
const CONTRACT = buildSchema(/* GraphQL */ `
  scalar DateTime
  scalar SafeInt
  scalar JSON

  type Query {
    auditEvents(first: Int, after: String, last: Int, before: String, filter: AuditEventFilter): AuditEventConnection!
  }

  input AuditEventFilter {
    from: DateTime
    to: DateTime
    objectType: String
    action: AuditAction
  }

  enum AuditAction { CREATE UPDATE DELETE LINK UNLINK }

  type AuditEventConnection {
    edges: [AuditEventEdge!]!
    pageInfo: PageInfo!
    window: AuditWindow!
  }

  type AuditEventEdge {
    cursor: String!
    node: AuditEvent!
  }

  type PageInfo {
    hasNextPage: Boolean!
    hasPreviousPage: Boolean!
    startCursor: String
    endCursor: String
  }

  type AuditWindow {
    from: DateTime!
    to: DateTime!
  }

  union AuditEvent =
    | LoginEvent
    | LaunchEvent
    | LoginErrorEvent
    | LaunchErrorEvent
    | GroupEvent
    | AppEntitlementEvent
    | DirectorySyncProfileEvent
    | OtherAuditEvent

  enum AuditBaseType { AUDIT ACTION }

  type AuditActor {
    id: SafeInt
    userName: String
    domain: String
    uuid: String
  }

  interface AuditRecord { ${RECORD} }

  type LoginEvent implements AuditRecord {
    ${RECORD}
    success: Boolean
    authMethods: [String!]!
    deviceType: String
    actorExternalId: String
    failureMessage: String
  }

  type LaunchEvent implements AuditRecord {
    ${RECORD}
    success: Boolean
    failureMessage: String
    resourceType: String
  }

  type LoginErrorEvent implements AuditRecord { ${RECORD} failureMessage: String }
  type LaunchErrorEvent implements AuditRecord { ${RECORD} failureMessage: String }
  type GroupEvent implements AuditRecord { ${RECORD} }
  type AppEntitlementEvent implements AuditRecord { ${RECORD} }
  type DirectorySyncProfileEvent implements AuditRecord { ${RECORD} }
  type OtherAuditEvent implements AuditRecord { ${RECORD} }
`);

const signature = (field: GraphQLField<unknown, unknown>) => ({
  type: String(field.type),
  args: Object.fromEntries(field.args.map((arg) => [arg.name, String(arg.type)])),
});

function shape(type: GraphQLNamedType | undefined): unknown {
  if (!type) return undefined;
  if (isObjectType(type) || isInterfaceType(type)) {
    return {
      fields: Object.fromEntries(Object.values(type.getFields()).map((f) => [f.name, signature(f)])),
      interfaces: type.getInterfaces().map((i) => i.name).sort(),
    };
  }
  if (isInputObjectType(type)) return Object.fromEntries(Object.values(type.getFields()).map((f) => [f.name, String(f.type)]));
  if (isEnumType(type)) return type.getValues().map((v) => v.name).sort();
  if (isUnionType(type)) return type.getTypes().map((t) => t.name).sort();
  return type.toString();
}

const contractTypes = Object.values(CONTRACT.getTypeMap()).filter(
  (type) => !type.name.startsWith('__') && !['String', 'Boolean', 'ID', 'Int', 'Float'].includes(type.name),
);

describe('auditEvents part of the contract', () => {
  it.each(contractTypes.map((type) => [type.name, type] as const))('%s matches the contract', (name, type) => {
    const contract = shape(type);
    const built = shape(schema.getType(name));
    if (name === 'Query') {
      expect(built).toMatchObject(contract as object); // other domains add their own fields
    } else {
      expect(built).toEqual(contract); // exactly: nothing missing, nothing extra, same nullability
    }
  });

  it('has no breaking change against the contract', () => {
    expect(findBreakingChanges(CONTRACT, schema)).toEqual([]);
  });
});
