/** Hot-path checks of the audit report's zod models, without a copy: each accepts only what its model accepts. */
import { MAX_DATE_MS, NULLABLE_TEXT_FIELDS, type AuditRecord, type AuditReportEnvelope } from './schemas.js';

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);

function isStringArray(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

/** auditReportEnvelopeSchema, unknown keys left in place (nothing reads them). */
export function isAuditReportEnvelope(json: unknown): json is AuditReportEnvelope {
  if (!isObject(json) || !isStringArray(json['header']) || !Array.isArray(json['data'])) return false;
  const links = json['_links'];
  if (links !== undefined && !(isObject(links) && isObject(links['self']) && typeof links['self']['href'] === 'string')) return false;
  const headerArg = json['headerArg'];
  return headerArg === undefined || isStringArray(headerArg);
}

const isText = (value: unknown) => value === undefined || value === null || typeof value === 'string';
const isInt = (value: unknown) => value === undefined || value === null || Number.isSafeInteger(value);
const isStamp = (value: unknown) =>
  value === undefined || (Number.isSafeInteger(value) && Math.abs(value as number) <= MAX_DATE_MS);

/** auditRecordSchema on a freshly parsed record, its transform applied in place; undefined: ask the model. */
export function asAuditRecord(json: unknown): AuditRecord | undefined {
  if (!isObject(json)) return undefined;
  const r = json;
  if (r['baseType'] !== 'Audit' && r['baseType'] !== 'Action') return undefined;
  if (typeof r['uuid'] !== 'string' || r['uuid'].length === 0) return undefined;
  if (typeof r['objectType'] !== 'string' || r['objectType'].length === 0) return undefined;
  if (!isStamp(r['timestamp']) || !isStamp(r['timeStamp'])) return undefined;
  if (r['timestamp'] === undefined && r['timeStamp'] === undefined) return undefined;
  if (!isInt(r['organizationId']) || !isInt(r['actorId'])) return undefined;
  for (const field of NULLABLE_TEXT_FIELDS) if (!isText(r[field])) return undefined;
  const values = r['values'];
  if (!(values === undefined || values === null || isObject(values))) return undefined;
  r['timestamp'] ??= r['timeStamp'];
  r['actorUuid'] ??= r['actorUUid'];
  r['sourceIp'] ??= r['sourceIP'];
  r['values'] ??= {};
  return r as AuditRecord;
}
