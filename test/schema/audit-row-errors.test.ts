/**
 * useRowErrors on its own: a yoga with only this plugin over the project schema and an in-memory
 * audit report. (The gateway's own wiring is covered by audit-errors.test.ts.)
 */
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useRowErrors } from '../../src/gateway/plugins/execution/audit-row-errors.js';
import { schema } from '../../src/gateway/schema/index.js';
import { fakeAudit } from '../helpers/audit-fake-upstream.js';

const run = async (audit: ReturnType<typeof fakeAudit>, query: string) => {
  const yoga = createYoga({ schema, plugins: [useRowErrors()], context: () => audit.context(), logging: false });
  const response = await yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data: any; errors: { message: string; path: unknown[] }[] };
};

describe('useRowErrors', () => {
  it('names the first 50 unreadable rows of a page one by one, and sums up the rest in one entry', async () => {
    const unreadable = new Set(Array.from({ length: 60 }, (_, i) => i + 3));
    const body = await run(fakeAudit(100, { unreadable }), '{ page: auditEvents(first: 100) { edges { cursor } } }');
    expect(body.data.page.edges).toHaveLength(40);
    expect(body.errors).toHaveLength(51);
    expect(body.errors[0]!.message).toBe('Audit record at position 3 of the window could not be read.');
    expect(body.errors[49]!.message).toBe('Audit record at position 52 of the window could not be read.');
    expect(body.errors[50]).toMatchObject({
      message: '10 more audit records of this page (positions 53 to 62 of the window) could not be read.',
      path: ['page'],
    });
  });

  it('appends the errors collected during execution to the result, with data kept', async () => {
    const audit = fakeAudit(20, { unreadable: new Set([1, 2]) });
    const yoga = createYoga({ schema, plugins: [useRowErrors()], context: () => audit.context(), logging: false });
    const response = await yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ page: auditEvents(first: 4) { edges { cursor } } }' }),
    });
    const body = await response.json();
    expect(body.data.page.edges).toHaveLength(2);
    expect(body.errors).toEqual([
      expect.objectContaining({ message: 'Audit record at position 1 of the window could not be read.', path: ['page'] }),
      expect.objectContaining({ message: 'Audit record at position 2 of the window could not be read.', path: ['page'] }),
    ]);
    expect(body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual([
      'UPSTREAM_INVALID_RESPONSE',
      'UPSTREAM_INVALID_RESPONSE',
    ]);
  });
});
