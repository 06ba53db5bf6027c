/** The seeded audit history: `count` events over the 72 hours before start, a few in alias spelling. */
import type { AuditRecordData } from './types.js';
import { createEventFactory } from './audit-generator.js';
import { createTenant } from './audit-tenant.js';
import { chance, intBetween, mulberry32 } from './random.js';

export const SEED_WINDOW_MS = 72 * 60 * 60 * 1000;
/** Share of events that reuse the previous timestamp, so ordering must break ties. */
const TIE_SHARE = 0.04;
/** Records written with the reference's alias spellings: a handful, like a real tenant's odd rows. */
const ALIAS_COUNT = 8;
const ALIAS_RENAMES: readonly Readonly<Record<string, string>>[] = [
  { timestamp: 'timeStamp' },
  { actorUuid: 'actorUUid' },
  { sourceIp: 'sourceIP' },
  { timestamp: 'timeStamp', actorUuid: 'actorUUid', sourceIp: 'sourceIP' },
];

/** Reads the timestamp whichever way the record spells it. */
export function recordTimestamp(record: AuditRecordData): number {
  return record.timestamp ?? record.timeStamp ?? Number.NaN;
}

/** Events strictly inside (start - 72 h, start), so a default window at start sees them all. */
export function generateSeedEvents(seed: number, start: number, count: number): AuditRecordData[] {
  const rand = mulberry32(seed);
  const factory = createEventFactory(createTenant(seed), rand);
  const stamps = new Float64Array(count);
  for (let i = 0; i < count; i++) stamps[i] = start - 1000 - Math.floor(rand() * (SEED_WINDOW_MS - 2000));
  stamps.sort();
  for (let i = 1; i < count; i++) if (chance(rand, TIE_SHARE)) stamps[i] = stamps[i - 1] as number;

  const records = Array.from(stamps, (ts) => factory.create(ts));
  const aliased = new Set<number>();
  while (aliased.size < Math.min(ALIAS_COUNT, count)) aliased.add(intBetween(rand, 0, count - 1));
  [...aliased].forEach((index, n) => {
    const record = records[index] as AuditRecordData;
    records[index] = renameKeys(record, ALIAS_RENAMES[n % ALIAS_RENAMES.length] ?? {});
  });
  return records;
}

/** Renames keys in place of the originals, so the serialized key order stays natural. */
function renameKeys(record: AuditRecordData, renames: Readonly<Record<string, string>>): AuditRecordData {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) out[renames[key] ?? key] = value;
  return out as unknown as AuditRecordData;
}
