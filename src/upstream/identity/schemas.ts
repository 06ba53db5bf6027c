/** The identity service's answers: tolerant of what the real service varies, strict about what the gateway relies on. */
import { z } from 'zod';
import { credentialValue, MAX_TOKEN_LENGTH } from '../schemas.js';

export const tokenResponseSchema = z.object({
  access_token: credentialValue(MAX_TOKEN_LENGTH),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().int().nonnegative(),
  refresh_token: credentialValue(MAX_TOKEN_LENGTH).optional(),
  scope: z.string().optional(),
});

/** The envelope strictly, the rows loosely: each is read on its own (audit-row-parsing.ts), so one bad row never fails its page. */
export const auditReportEnvelopeSchema = z.object({
  header: z.array(z.string()),
  data: z.array(z.unknown()),
  _links: z.object({ self: z.object({ href: z.string() }) }).optional(),
  headerArg: z.array(z.string()).optional(),
});
export type AuditReportEnvelope = z.infer<typeof auditReportEnvelopeSchema>;

/** The largest instant a Date (and so a DateTime) can hold, in ms either side of the epoch. */
export const MAX_DATE_MS = 8.64e15;
const epochMillis = z.number().int().min(-MAX_DATE_MS).max(MAX_DATE_MS);

// Absent and null both read as null in GraphQL: no per-field transform on this hot path.
const optionalText = z.string().nullish();
const optionalInt = z.number().int().nullish();

const auditRecordShape = {
  baseType: z.enum(['Audit', 'Action']),
  uuid: z.string().min(1),
  timestamp: epochMillis.optional(),
  timeStamp: epochMillis.optional(),
  organizationId: optionalInt,
  tenantId: optionalText,
  actorId: optionalInt,
  actorUserName: optionalText,
  actorDomain: optionalText,
  actorUuid: optionalText,
  actorUUid: optionalText,
  clientId: optionalText,
  deviceId: optionalText,
  workspaceId: optionalText,
  sourceIp: optionalText,
  sourceIP: optionalText,
  objectType: z.string().min(1),
  objectId: optionalText,
  objectName: optionalText,
  objectAction: optionalText,
  // Passed on verbatim (JSON scalar): checked to be an object, not copied key by key.
  values: z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v)).nullish(),
};

/** The nullable text fields of auditRecordSchema, for its in-place check (fast-checks.ts). */
export const NULLABLE_TEXT_FIELDS = Object.entries(auditRecordShape)
  .filter(([, type]) => type === optionalText)
  .map(([name]) => name);

/** The record carried as a JSON string in the last column of each row (spec 2.3). */
export const auditRecordSchema = z
  .object(auditRecordShape)
  .refine((r) => r.timestamp !== undefined || r.timeStamp !== undefined, { message: 'timestamp is missing', path: ['timestamp'] })
  // The reference spells some fields two ways; one name each from here on, in zod's fresh output.
  .transform((r) => {
    r.timestamp ??= r.timeStamp;
    r.actorUuid ??= r.actorUUid;
    r.sourceIp ??= r.sourceIP;
    r.values ??= {};
    return r as typeof r & { timestamp: number; values: Record<string, unknown> };
  });
export type AuditRecord = z.output<typeof auditRecordSchema>;
