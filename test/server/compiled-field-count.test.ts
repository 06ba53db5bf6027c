/**
 * The field count that decides whether graphql-jit compiles an operation
 * (src/gateway/plugins/compat/compiled-field-count.ts), on the gateway's schema: fields under a union or an
 * interface count once per possible type, fragments count where they apply.
 */
import { getOperationAST, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { compiledFieldCount } from '../../src/gateway/plugins/compat/compiled-field-count.js';
import { schema } from '../../src/gateway/schema/index.js';

const count = (query: string, limit = 10_000) => {
  const document = parse(query);
  return compiledFieldCount(schema, document, getOperationAST(document)!, limit);
};

const RECORD_TYPES = 8;

describe('compiledFieldCount', () => {
  it('counts each field of an object once', () => {
    expect(count('{ __typename }')).toBe(1);
    expect(count('{ auditEvents(first: 1) { pageInfo { hasNextPage endCursor } } }')).toBe(4);
  });

  it('counts the fields under the AuditEvent union once per member type', () => {
    expect(count('{ auditEvents(first: 1) { edges { node { __typename } } } }')).toBe(3 + RECORD_TYPES);
  });

  it('counts an inline fragment only on the types it applies to', () => {
    expect(count('{ auditEvents(first: 1) { edges { node { ... on LoginEvent { uuid timestamp } } } } }')).toBe(3 + 2);
    expect(count('{ auditEvents(first: 1) { edges { node { ... on AuditRecord { uuid timestamp } } } } }')).toBe(3 + 2 * RECORD_TYPES);
    expect(count('{ auditEvents(first: 1) { edges { node { ... { __typename } } } } }')).toBe(3 + RECORD_TYPES);
  });

  it('expands a named fragment at each of its spreads', () => {
    const query = `{ a: auditEvents(first: 1) { ...Page } b: auditEvents(first: 2) { ...Page } }
      fragment Page on AuditEventConnection { edges { node { ...Login } } }
      fragment Login on LoginEvent { uuid actor { userName } }`;
    expect(count(query)).toBe(2 * (3 + 3));
  });

  it('stops counting one past the limit', () => {
    const query = `{ ${Array.from({ length: 10 }, (_, i) => `p${i}: auditEvents(first: 1) { edges { node { __typename } } }`).join(' ')} }`;
    expect(count(query)).toBe(10 * (3 + RECORD_TYPES));
    expect(count(query, 20)).toBe(21);
    expect(count(query, 10 * (3 + RECORD_TYPES))).toBe(10 * (3 + RECORD_TYPES));
  });
});
