/**
 * The work of checking that fields merge (src/plugins/field-merging.ts), counted from the document
 * alone: every legitimate use of this schema is well within the limit, repeated fields past it are
 * found without walking further. The gateway's answers: field-merging.test.ts.
 */
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { fieldMergeWork } from '../../src/plugins/field-merging.js';
import { operationLimits } from '../../src/plugins/operation-limits.js';
import { fullPage, legitimate, repeatedFields, words } from '../helpers/field-merging-documents.js';

const LIMIT = operationLimits.maxFieldMergeWork;
const work = (document: string, limit = Number.MAX_SAFE_INTEGER) => fieldMergeWork(parse(document), limit);

describe('the work of merging fields', () => {
  it('counts each selection collected and each pair of fields that share a response key, at each place in the response', () => {
    expect(work('{ a b c }')).toBe(3);
    expect(work(`{ ${words(3990, (i) => `f${i}`)} }`)).toBe(3990);
    expect(work('{ a a a }')).toBe(3 + 3);
    expect(work('{ x: a x: b }')).toBe(2 + 1);
    // Two `a` at the root, and their `b`s meet below them.
    expect(work('{ a { b } a { b } }')).toBe(2 + 1 + (2 + 1));
    // Inline fragments merge into their set.
    expect(work('{ a ... on Query { a } }')).toBe(3 + 1);
  });

  it("compares a fragment's own fields once, within the fragment, wherever it is spread", () => {
    const inline = work(`{ ${words(30, (i) => `p${i}: auditEvents { ${fullPage} }`)} }`);
    const throughFragment = work(`{ ${words(30, (i) => `p${i}: auditEvents { ...Page }`)} } fragment Page on AuditEventConnection { ${fullPage} }`);
    const page = work(`fragment Page on AuditEventConnection { ${fullPage} }`);
    expect(inline).toBeGreaterThan(30 * page);
    expect(throughFragment).toBeLessThan(2 * page);
  });

  it('counts a fragment spread twice in one selection set once, as validation and execution take it', () => {
    expect(work('{ ...F ...F } fragment F on Query { a }')).toBe(work('{ ...F } fragment F on Query { a }') + 1);
  });

  it('counts pairs of fragments spread together, and fields beside fragments', () => {
    const fragments = words(10, (i) => `fragment F${i} on Query { f${i} }`);
    expect(work(`{ ${words(10, (i) => `...F${i}`)} } ${fragments}`)).toBeGreaterThan(45);
    expect(work(`{ ${words(100, (i) => `g${i}`)} ...F0 ...F1 } ${fragments}`)).toBeGreaterThan(200);
  });

  it('ends on a fragment cycle', () => {
    expect(work('{ a { ...F } a { ...G } } fragment F on Query { a { ...G } } fragment G on Query { a { ...F } }', LIMIT)).toBeGreaterThan(LIMIT);
    expect(work('{ ...F } fragment F on Query { ...F a }')).toBeLessThan(20);
  });

  it.each(legitimate)('admits %s', (_, document) => {
    expect(work(document)).toBeLessThanOrEqual(LIMIT);
  });

  it('leaves room beyond the largest legitimate operation', () => {
    expect(Math.max(...legitimate.map(([, document]) => work(document)))).toBeLessThan(LIMIT * 0.9);
  });

  it.each(repeatedFields)('finds %s past the limit', (_, document) => {
    expect(work(document)).toBeGreaterThan(LIMIT);
  });

  it('stops at the first step past the limit', () => {
    // 3990 selections to collect: it stops collecting at the 101st.
    expect(work(`{ ${words(3990, () => '__typename')} }`, 100)).toBe(101);
    // The probe: 360 selections, then 64,620 pairs found in one step; their 360 `name`s are never collected.
    expect(work(`{ ${words(360, (i) => `updateSessionFiles(updateSessionId: "x${i}") { name }`)} }`, LIMIT)).toBe(360 + (360 * 359) / 2);
  });
});
