/** One file of an update session (spec 2.4): the upstream's snake_case FileInfo under the contract's camelCase names. */
import type {
  FileInfo,
  LocalizableMessage,
  MessageParam,
  MessageParamValue,
  NestedMessage,
  TransferEndpoint,
} from '../../../upstream/content-library/schemas.js';
import { builder, type ObjectFields } from '../builder.js';
import {
  checksumAlgorithm,
  transferSourceType,
  transferStatus,
  upstreamDateTime,
  upstreamInt32,
  upstreamSafeInt,
  uriScheme,
} from './values.js';

const TransferSourceTypeRef = builder.enumType('TransferSourceType', {
  description: 'How the content of a file reaches the server.',
  values: {
    NONE: { description: 'No transfer requested (also when the file is not being changed).' },
    PUSH: { description: 'A client uploads the content with HTTP(S) PUT requests to uploadEndpoint.' },
    PULL: { description: 'The server pulls the content from sourceEndpoint (http, https, file or ds).' },
  },
});

const TransferStatusRef = builder.enumType('TransferStatus', {
  description: 'Where a file is in its transfer.',
  values: {
    WAITING_FOR_TRANSFER: { description: 'The transfer has not started yet.' },
    TRANSFERRING: { description: 'The content is being transferred.' },
    READY: { description: 'The server has the whole file; size is set.' },
    VALIDATING: { description: 'The server is checking the received content.' },
    ERROR: { description: 'The transfer failed; errorMessage says why.' },
  },
});

const ChecksumAlgorithmRef = builder.enumType('ChecksumAlgorithm', {
  description: 'The algorithm of a file checksum.',
  values: {
    SHA1: { description: 'SHA-1 (the default when the upstream sets none).' },
    MD5: { description: 'MD5.' },
    SHA256: { description: 'SHA-256.' },
    SHA512: { description: 'SHA-512.' },
  },
});

const ChecksumInfoRef = builder.objectRef<NonNullable<FileInfo['checksum_info']>>('ChecksumInfo').implement({
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

/** The vAPI localizable message (spec 2.5): a param's value may nest a message (`l`), as deep as a client selects. */
const NestedLocalizableMessageRef = builder.objectRef<NestedMessage>('NestedLocalizableMessage');

const LocalizableMessageRef = builder.objectRef<LocalizableMessage>('LocalizableMessage').implement({
  description: 'A message with an id for translation, its English text and the values it refers to.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Stable identifier of the message, for translation.' }),
    defaultMessage: t.exposeString('default_message', { description: 'The message in English.' }),
    localized: t.exposeString('localized', {
      nullable: true,
      description: 'The message in the requested language, when the server provides it.',
    }),
    args: t.exposeStringList('args', { description: 'Positional arguments of the message.' }),
    params: t.expose('params', { type: [LocalizableMessageParamRef], description: 'Named arguments of the message.' }),
  }),
});

NestedLocalizableMessageRef.implement({
  description: 'A message used as a parameter value of another message.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Stable identifier of the message, for translation.' }),
    params: t.expose('params', { type: [LocalizableMessageParamRef], description: 'Named arguments of the message.' }),
  }),
});

const LocalizableMessageParamRef = builder.objectRef<MessageParam>('LocalizableMessageParam').implement({
  description: 'One named argument of a message.',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The name the message text refers to.' }),
    value: t.expose('value', { type: LocalizableMessageParamValueRef, description: 'The value of the argument.' }),
  }),
});

const LocalizableMessageParamValueRef = builder.objectRef<MessageParamValue>('LocalizableMessageParamValue').implement({
  description: 'The value of a message argument; the member that is set gives its kind.',
  fields: (t) => ({
    dt: t.field({ type: 'DateTime', nullable: true, description: 'A date-time value.', resolve: (v) => upstreamDateTime(v.dt) }),
    s: t.exposeString('s', { nullable: true, description: 'A string value.' }),
    d: t.exposeFloat('d', { nullable: true, description: 'A decimal value.' }),
    precision: t.int({
      nullable: true,
      description: 'Digits after the decimal point when `d` is shown.',
      resolve: (v) => upstreamInt32(v.precision),
    }),
    format: t.exposeString('format', { nullable: true, description: 'How to show the value, e.g. SHORT_DATE.' }),
    i: t.field({ type: 'SafeInt', nullable: true, description: 'An integer value.', resolve: (v) => upstreamSafeInt(v.i) }),
    l: t.expose('l', { type: NestedLocalizableMessageRef, nullable: true, description: 'A nested message.' }),
  }),
});

const byteCount = (t: ObjectFields<FileInfo>, description: string, bytes: (file: FileInfo) => number | null | undefined) =>
  t.field({ type: 'SafeInt', nullable: true, description, resolve: (file) => upstreamSafeInt(bytes(file)) });

const endpoint = (t: ObjectFields<FileInfo>, field: 'source_endpoint' | 'upload_endpoint', description: string) =>
  t.expose(field, { type: TransferEndpointRef, nullable: true, description });

export const UpdateSessionFileRef = builder.objectRef<FileInfo>('UpdateSessionFile').implement({
  description: 'A file of a content library item update session.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The file name, unique within the session.' }),
    sourceType: t.field({
      type: TransferSourceTypeRef,
      description: 'NONE also when the upstream sends a source type this gateway does not know (see upstreamSourceType).',
      resolve: (file, _args, context) => {
        const type = transferSourceType(file.source_type);
        if (!type) {
          context.log.warn(
            { file: file.name, sourceType: file.source_type.slice(0, 200) },
            'unknown update session file source_type; reported as NONE',
          );
        }
        return type ?? 'NONE';
      },
    }),
    upstreamSourceType: t.exposeString('source_type', {
      description:
        "The upstream's source_type verbatim; differs from sourceType only for a value this gateway does not know.",
    }),
    size: byteCount(t, 'Bytes received; set once status is READY.', (file) => file.size),
    checksumInfo: t.expose('checksum_info', {
      type: ChecksumInfoRef,
      nullable: true,
      description: 'Null when the server does not verify a checksum.',
    }),
    sourceEndpoint: endpoint(t, 'source_endpoint', 'Where the server pulls the file from (PULL).'),
    uploadEndpoint: endpoint(t, 'upload_endpoint', 'Where a client uploads the file to (PUSH).'),
    bytesTransferred: byteCount(t, 'Bytes transferred so far.', (file) => file.bytes_transferred),
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
