/** One file of an update session (spec 2.4): the upstream's snake_case FileInfo under the contract's camelCase names. */
import type { FileInfo, TransferEndpoint } from '../../../upstream/content-library/schemas.js';
import { builder } from '../builder.js';
import { LocalizableMessageRef } from '../localizable-message.js';
import {
  CHECKSUM_ALGORITHMS,
  TRANSFER_SOURCE_TYPES,
  TRANSFER_STATUSES,
  checksumAlgorithm,
  transferSourceType,
  transferStatus,
  upstreamSafeInt,
  uriScheme,
} from './values.js';

type ChecksumInfo = NonNullable<FileInfo['checksum_info']>;

/** Enum values with their descriptions, checked to cover exactly the values the gateway maps. */
const describedValues = <V extends string>(values: readonly V[], descriptions: Record<V, string>) =>
  Object.fromEntries(values.map((value) => [value, { value, description: descriptions[value] }])) as Record<V, { value: V; description: string }>;

const TransferSourceTypeRef = builder.enumType('TransferSourceType', {
  description: 'How the content of a file reaches the server.',
  values: describedValues(TRANSFER_SOURCE_TYPES, {
    NONE: 'No transfer requested (also when the file is not being changed).',
    PUSH: 'A client uploads the content with HTTP(S) PUT requests to uploadEndpoint.',
    PULL: 'The server pulls the content from sourceEndpoint (http, https, file or ds).',
  }),
});

const TransferStatusRef = builder.enumType('TransferStatus', {
  description: 'Where a file is in its transfer.',
  values: describedValues(TRANSFER_STATUSES, {
    WAITING_FOR_TRANSFER: 'The transfer has not started yet.',
    TRANSFERRING: 'The content is being transferred.',
    READY: 'The server has the whole file; size is set.',
    VALIDATING: 'The server is checking the received content.',
    ERROR: 'The transfer failed; errorMessage says why.',
  }),
});

const ChecksumAlgorithmRef = builder.enumType('ChecksumAlgorithm', {
  description: 'The algorithm of a file checksum.',
  values: describedValues(CHECKSUM_ALGORITHMS, {
    SHA1: 'SHA-1 (the default when the upstream sets none).',
    MD5: 'MD5.',
    SHA256: 'SHA-256.',
    SHA512: 'SHA-512.',
  }),
});

const ChecksumInfoRef = builder.objectRef<ChecksumInfo>('ChecksumInfo').implement({
  description: 'The checksum the server verifies the received file against.',
  fields: (t) => ({
    algorithm: t.field({
      type: ChecksumAlgorithmRef,
      description: 'SHA1 when the upstream leaves it unset.',
      resolve: (info) => checksumAlgorithm(info.algorithm),
    }),
    checksum: t.exposeString('checksum', { description: 'The checksum value, computed with `algorithm`.' }),
  }),
});

const TransferEndpointRef = builder.objectRef<TransferEndpoint>('TransferEndpoint').implement({
  description: 'Where the server pulls a file from, or where a client uploads it to.',
  fields: (t) => ({
    uri: t.exposeString('uri', { description: 'The endpoint address, verbatim.' }),
    scheme: t.string({
      description: "The uri's scheme: http, https, file or ds.",
      resolve: (endpoint) => uriScheme(endpoint.uri),
    }),
    sslCertificateThumbprint: t.exposeString('ssl_certificate_thumbprint', {
      nullable: true,
      description: 'SHA-1 thumbprint of the remote certificate; when set, only that certificate is accepted (HTTPS only).',
    }),
  }),
});

export const UpdateSessionFileRef = builder.objectRef<FileInfo>('UpdateSessionFile').implement({
  description: 'A file of a content library item update session.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The file name, unique within the session.' }),
    sourceType: t.field({
      type: TransferSourceTypeRef,
      description: 'NONE also when the upstream sends a source type this gateway does not know (see upstreamSourceType).',
      resolve: (file, _args, context) => {
        const { type, known } = transferSourceType(file.source_type);
        if (!known) {
          context.log.warn(
            { file: file.name, sourceType: file.source_type.slice(0, 200) },
            'unknown update session file source_type; reported as NONE',
          );
        }
        return type;
      },
    }),
    upstreamSourceType: t.exposeString('source_type', {
      description:
        "The upstream's source_type verbatim; differs from sourceType only for a value this gateway does not know.",
    }),
    size: t.field({
      type: 'SafeInt',
      nullable: true,
      description: 'Bytes received; set once status is READY.',
      resolve: (file) => upstreamSafeInt(file.size),
    }),
    checksumInfo: t.expose('checksum_info', {
      type: ChecksumInfoRef,
      nullable: true,
      description: 'Null when the server does not verify a checksum.',
    }),
    sourceEndpoint: t.expose('source_endpoint', {
      type: TransferEndpointRef,
      nullable: true,
      description: 'Where the server pulls the file from (PULL).',
    }),
    uploadEndpoint: t.expose('upload_endpoint', {
      type: TransferEndpointRef,
      nullable: true,
      description: 'Where a client uploads the file to (PUSH).',
    }),
    bytesTransferred: t.field({
      type: 'SafeInt',
      nullable: true,
      description: 'Bytes transferred so far.',
      resolve: (file) => upstreamSafeInt(file.bytes_transferred),
    }),
    keepInStorage: t.exposeBoolean('keep_in_storage', {
      nullable: true,
      description: "The upstream's keep_in_storage flag, verbatim (its meaning is not documented further).",
    }),
    status: t.field({
      type: TransferStatusRef,
      nullable: true,
      description: 'Null, with an UPSTREAM_INVALID_RESPONSE error for this field, when the upstream sends a status this gateway does not know.',
      resolve: (file) => transferStatus(file.status),
    }),
    errorMessage: t.expose('error_message', {
      type: LocalizableMessageRef,
      nullable: true,
      description: 'Why the transfer failed; set when status is ERROR.',
    }),
  }),
});
