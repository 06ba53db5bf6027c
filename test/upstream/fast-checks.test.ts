/**
 * The hot-path checks of the audit report against their zod models: on generated values (valid,
 * nearly valid and wrong), a check accepts only what the model accepts, and the record it keeps
 * reads exactly as the model's output on every field the model defines.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_DEPTH, readAuditRows } from '../../src/upstream/identity/audit-row-parsing.js';
import { asAuditRecord, isAuditReportEnvelope } from '../../src/upstream/identity/fast-checks.js';
import { auditRecordSchema, auditReportEnvelopeSchema } from '../../src/upstream/identity/schemas.js';

const MODEL_FIELDS = Object.keys(auditRecordSchema.in.shape);

/** Anything JSON can hold, plus values close to what each field wants. */
const wrong = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.string({ maxLength: 3 }),
  fc.constant(''),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(2 ** 60),
  fc.constant([]),
  fc.constant({}),
  fc.constant(['a']),
);
const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: wrong });
const text = field(fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null)));
const int = field(fc.oneof(fc.integer(), fc.constant(null)));
// Around the largest instant a Date can hold, too: past it a record has no valid timestamp.
const stamp = field(fc.oneof(fc.integer({ min: 0 }), fc.constantFrom(8.64e15, 8.64e15 + 1, -8.64e15 - 1, 9e15)));

const record = fc.record(
  {
    baseType: field(fc.constantFrom('Audit', 'Action')),
    uuid: field(fc.uuid()),
    timestamp: stamp,
    timeStamp: stamp,
    organizationId: int,
    tenantId: text,
    actorId: int,
    actorUserName: text,
    actorDomain: text,
    actorUuid: text,
    actorUUid: text,
    clientId: text,
    deviceId: text,
    workspaceId: text,
    sourceIp: text,
    sourceIP: text,
    objectType: field(fc.constantFrom('LOGIN', 'Group', 'X')),
    objectId: text,
    objectName: text,
    objectAction: text,
    values: field(fc.oneof(fc.constant(null), fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })))),
    extra: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: ['baseType', 'uuid', 'objectType'] },
);

const ordinary = { baseType: 'Audit', uuid: 'u-1', timestamp: 1700000000000, objectType: 'LOGIN' };

/** As the gateway reads them: fresh from JSON.parse. */
const parsed = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('the audit record check', () => {
  it('accepts exactly the records the zod model accepts, and reads the same on every model field', () => {
    let accepted = 0;
    fc.assert(
      fc.property(record, (value) => {
        const model = auditRecordSchema.safeParse(parsed(value));
        const fast = asAuditRecord(parsed(value));
        // Both ways: a record the model accepts never needs the model on the hot path.
        expect(Boolean(fast), JSON.stringify(value)).toBe(model.success);
        if (!fast) return;
        accepted++;
        expect(model.success).toBe(true);
        const expected = model.data as Record<string, unknown>;
        for (const name of MODEL_FIELDS) expect((fast as Record<string, unknown>)[name], name).toEqual(expected[name]);
      }),
      // Empty identifiers, which random records rarely combine with an otherwise valid record.
      { numRuns: 400, examples: [[{ ...ordinary, uuid: '' }], [{ ...ordinary, objectType: '' }]] },
    );
    // The generated values reach the accepting side often enough to mean something.
    expect(accepted).toBeGreaterThan(30);
  });

  it('takes the ordinary record without zod, aliases read under one name', () => {
    const record = asAuditRecord(
      parsed({ baseType: 'Action', uuid: 'u-1', timeStamp: 1700000000000, objectType: 'LOGIN', actorUUid: 'a-1', sourceIP: '10.0.0.1' }),
    );
    expect(record).toMatchObject({ timestamp: 1700000000000, actorUuid: 'a-1', sourceIp: '10.0.0.1', values: {} });
  });

  it('leaves a record without any timestamp, or with a fractional id, to the zod model', () => {
    expect(asAuditRecord(parsed({ baseType: 'Audit', uuid: 'u', objectType: 'LOGIN' }))).toBeUndefined();
    expect(asAuditRecord(parsed({ baseType: 'Audit', uuid: 'u', objectType: 'LOGIN', timestamp: 1, actorId: 1.5 }))).toBeUndefined();
  });
});

const links = fc.oneof(
  fc.constant(undefined),
  fc.record({ self: fc.oneof(fc.record({ href: fc.oneof(fc.string({ maxLength: 5 }), wrong) }), wrong) }),
  wrong,
);
const strings = fc.oneof({ weight: 4, arbitrary: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }) }, { weight: 1, arbitrary: fc.array(wrong, { maxLength: 2 }) }, { weight: 1, arbitrary: wrong });

describe('the audit report envelope check', () => {
  it('accepts exactly the envelopes the zod model accepts, with the same rows', () => {
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.record(
          { header: strings, data: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), wrong), _links: links, headerArg: strings },
          { requiredKeys: [] },
        ),
        (value) => {
          const json = parsed(value);
          const model = auditReportEnvelopeSchema.safeParse(parsed(value));
          // Both ways: an envelope the model accepts never needs the model on the hot path.
          expect(isAuditReportEnvelope(json), JSON.stringify(value)).toBe(model.success);
          if (!model.success) return;
          accepted++;
          expect((json as { data: unknown }).data).toEqual(model.data.data);
          expect((json as { header: unknown }).header).toEqual(model.data.header);
        },
      ),
      { numRuns: 800 },
    );
    expect(accepted).toBeGreaterThan(50);
  });

  it('refuses a body that is not an envelope', () => {
    expect(isAuditReportEnvelope(parsed({ header: [], data: {} }))).toBe(false);
    expect(isAuditReportEnvelope(parsed({ header: [1], data: [] }))).toBe(false);
    expect(isAuditReportEnvelope(parsed([]))).toBe(false);
    expect(isAuditReportEnvelope(parsed({ header: ['a'], data: [['1']], _links: { self: {} } }))).toBe(false);
  });
});

describe('record depth', () => {
  const good = { baseType: 'Audit', uuid: 'u', objectType: 'Group', timestamp: 1 };
  /** The record itself is level 1, its values level 2, and each nested object one more. */
  const nestedTo = (levels: number, innermost: object = {}) => {
    let values: unknown = innermost;
    for (let level = 3; level <= levels; level++) values = { inner: values };
    return JSON.stringify({ ...good, values });
  };

  it('reads a record nested exactly MAX_RECORD_DEPTH levels, refuses one level more', () => {
    const rows = readAuditRows([
      ['1', null, null, null, nestedTo(MAX_RECORD_DEPTH)],
      ['1', null, null, null, nestedTo(MAX_RECORD_DEPTH + 1)],
    ]).rows;
    expect(rows[0]).toMatchObject({ ok: true });
    expect(rows[1]).toEqual({ ok: false, reason: `The audit record is nested deeper than ${MAX_RECORD_DEPTH} levels.` });
  });

  it('counts only objects and arrays as levels: null, numbers and text at the deepest level add none', () => {
    const rows = readAuditRows([['1', null, null, null, nestedTo(MAX_RECORD_DEPTH, { gone: null, n: 1, s: 'x' })]]).rows;
    expect(rows[0]).toMatchObject({ ok: true });
  });
});
