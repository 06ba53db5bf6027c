import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it, vi } from 'vitest';
import type { RequestState } from '../../src/gateway/context.js';
import { callerOf, useCallerAuth } from '../../src/gateway/plugins/auth/caller-auth.js';

const hashes = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  const createHash: typeof crypto.createHash = (...args) => {
    hashes.count++;
    return crypto.createHash(...args);
  };
  return { ...crypto, default: { ...crypto, createHash }, createHash };
});

const yoga = createYoga({
  schema: createSchema({
    typeDefs: 'type Query { caller: String }',
    resolvers: { Query: { caller: (_s: unknown, _a: unknown, context: RequestState) => callerOf(context).id } },
  }),
  logging: false,
  plugins: [useCallerAuth({ apiKeys: ['key-alpha', 'key-beta'], allowAnonymous: false })],
});

async function callerFor(apiKey: string): Promise<string | number> {
  const response = await yoga.fetch('http://yoga.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ query: '{ caller }' }),
  });
  return response.status === 200 ? ((await response.json()) as { data: { caller: string } }).data.caller : response.status;
}

describe('API key verdicts', () => {
  it('hashes a key presented again no more: the verdict of a recent key is remembered, right or wrong', async () => {
    expect(await callerFor('key-beta')).toBe('api-key:1');
    expect(await callerFor('wrong-key')).toBe(401);
    const before = hashes.count;
    for (let i = 0; i < 5; i++) {
      expect(await callerFor('key-beta')).toBe('api-key:1');
      expect(await callerFor('wrong-key')).toBe(401);
    }
    expect(hashes.count).toBe(before);
  });

  it('keeps its verdicts right while many different keys pass through its bounded memory', async () => {
    for (let i = 0; i < 500; i++) expect(await callerFor(`guess-${i}`)).toBe(401);
    expect(await callerFor('key-alpha')).toBe('api-key:0');
    expect(await callerFor('key-beta')).toBe('api-key:1');
    expect(await callerFor('guess-1')).toBe(401);
  });
});
