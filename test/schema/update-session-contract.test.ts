/**
 * The built schema contains the update-session part of the public contract with the same names,
 * types, arguments and nullability (it may add fields, never change or drop one).
 */
import {
  buildSchema,
  findBreakingChanges,
  isEnumType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLNamedType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { subgraphSdl } from '../../src/schema/federation-sdl.js';
import { schema } from '../../src/schema/index.js';

// Copied from the contract's schema.graphql (descriptions left out); @key declared so it builds.
const CONTRACT = buildSchema(/* GraphQL */ `
  directive @key(fields: String!, resolvable: Boolean = true) repeatable on OBJECT | INTERFACE
  scalar DateTime
  scalar SafeInt

  type Query {
    updateSessionFiles(updateSessionId: ID!): [UpdateSessionFile!]
    updateSession(id: ID!): UpdateSession
  }

  type UpdateSession @key(fields: "id") {
    id: ID!
    files: [UpdateSessionFile!]!
  }

  type UpdateSessionFile {
    name: String!
    sourceType: TransferSourceType!
    size: SafeInt
    checksumInfo: ChecksumInfo
    sourceEndpoint: TransferEndpoint
    uploadEndpoint: TransferEndpoint
    bytesTransferred: SafeInt
    keepInStorage: Boolean
    status: TransferStatus
    errorMessage: LocalizableMessage
  }

  enum TransferSourceType { NONE PUSH PULL }
  enum TransferStatus { WAITING_FOR_TRANSFER TRANSFERRING READY VALIDATING ERROR }
  enum ChecksumAlgorithm { SHA1 MD5 SHA256 SHA512 }

  type ChecksumInfo {
    algorithm: ChecksumAlgorithm!
    checksum: String!
  }

  type TransferEndpoint {
    uri: String!
    scheme: String!
    sslCertificateThumbprint: String
  }

  type LocalizableMessage {
    id: String!
    defaultMessage: String!
    localized: String
    args: [String!]!
    params: [LocalizableMessageParam!]!
  }

  type LocalizableMessageParam {
    key: String!
    value: LocalizableMessageParamValue!
  }

  type LocalizableMessageParamValue {
    dt: DateTime
    s: String
    d: Float
    precision: Int
    format: String
    i: SafeInt
    l: NestedLocalizableMessage
  }

  type NestedLocalizableMessage {
    id: String!
    params: [LocalizableMessageParam!]!
  }
`);

const signature = (field: GraphQLField<unknown, unknown>) => ({
  type: String(field.type),
  args: Object.fromEntries(field.args.map((arg) => [arg.name, String(arg.type)])),
});

function shape(type: GraphQLNamedType | undefined) {
  if (!type) return undefined;
  if (isObjectType(type)) return Object.fromEntries(Object.values(type.getFields()).map((f) => [f.name, signature(f)]));
  if (isEnumType(type)) return type.getValues().map((v) => v.name).sort();
  if (isScalarType(type)) return 'scalar';
  return type.toString();
}

const contractTypes = Object.values(CONTRACT.getTypeMap()).filter(
  (type) => !type.name.startsWith('__') && !['String', 'Boolean', 'ID', 'Int', 'Float'].includes(type.name),
);

describe('update-session part of the contract', () => {
  it.each(contractTypes.map((type) => [type.name, type] as const))('%s matches the contract', (name, type) => {
    const contract = shape(type);
    const built = shape(schema.getType(name));
    if (isObjectType(type)) {
      // Every contract field with its exact type and arguments; added fields are allowed.
      expect(built).toMatchObject(contract as object);
    } else {
      expect(built).toEqual(contract);
    }
  });

  it('has no breaking change against the contract', () => {
    // @key is a federation directive: the subgraph SDL carries it (tested below), the API does not.
    const changes = findBreakingChanges(CONTRACT, schema).filter((c) => c.description !== 'key was removed.');
    expect(changes).toEqual([]);
  });

  it('keeps UpdateSession an entity keyed by id in the subgraph SDL', () => {
    expect(subgraphSdl()).toMatch(/type UpdateSession\s+@key\(fields: "id"\)/);
    expect(subgraphSdl()).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+", import: \["@key"/);
  });
});
