/** The content library's answers (vAPI `/rest`): enum-like fields stay strings; what the schema layer reports passes. */
import { z } from 'zod';
import { credentialValue, MAX_SESSION_ID_LENGTH } from '../schemas.js';

/** Byte counts exceed 2^31; some serializers send longs as strings. */
const byteCount = z
  .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
  .pipe(z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER));

const transferEndpointSchema = z.object({
  // An empty uri has no scheme either: the endpoint alone is null, with its error.
  uri: z.string(),
  ssl_certificate_thumbprint: z.string().nullish(),
});
export type TransferEndpoint = z.infer<typeof transferEndpointSchema>;

// The nested message is declared as a type: an inferred one cannot refer to itself.
export type NestedMessage = { id: string; params: { key: string; value: MessageParamValue }[] };
export type MessageParam = NestedMessage['params'][number];

const messageParamValueSchema = z.object({
  dt: z.string().nullish(),
  s: z.string().nullish(),
  d: z.number().nullish(),
  // Any finite number: one that is no 32-bit (precision) or safe (i) integer is that member's error alone.
  precision: z.number().nullish(),
  format: z.string().nullish(),
  i: z.number().nullish(),
  get l(): z.ZodOptional<z.ZodNullable<z.ZodType<NestedMessage>>> {
    return nestedMessageSchema.nullish();
  },
});
export type MessageParamValue = z.infer<typeof messageParamValueSchema>;
const messageParamsSchema = z
  .array(z.object({ key: z.string(), value: messageParamValueSchema }))
  .nullish()
  .transform((p) => p ?? []);
const nestedMessageSchema: z.ZodType<NestedMessage> = z.object({
  id: z.string(),
  params: messageParamsSchema,
});

const localizableMessageSchema = z.object({
  id: z.string(),
  default_message: z.string(),
  localized: z.string().nullish(),
  args: z.array(z.string()).nullish().transform((a) => a ?? []),
  params: messageParamsSchema,
});
export type LocalizableMessage = z.infer<typeof localizableMessageSchema>;

export const fileInfoSchema = z.object({
  name: z.string(),
  source_type: z.string(),
  size: byteCount.nullish(),
  checksum_info: z.object({ algorithm: z.string().nullish(), checksum: z.string() }).nullish(),
  source_endpoint: transferEndpointSchema.nullish(),
  upload_endpoint: transferEndpointSchema.nullish(),
  bytes_transferred: byteCount.nullish(),
  keep_in_storage: z.boolean().nullish(),
  status: z.string().nullish(),
  error_message: localizableMessageSchema.nullish(),
});
export type FileInfo = z.infer<typeof fileInfoSchema>;

/** The list's envelope only: its files are read one by one (readFileRows), so one bad file costs only itself. */
export const fileListSchema = z.object({ value: z.array(z.unknown()) });

export const sessionLoginSchema = z.object({ value: credentialValue(MAX_SESSION_ID_LENGTH) });
