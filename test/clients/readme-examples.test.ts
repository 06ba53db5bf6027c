/**
 * Every client example of README.md, taken from the README itself: written under its printed file
 * name into a project folder (beside a link to `schema/`, as a frontend project holds a copy of
 * it) and run against a demo-mode gateway, as a reader would run it with `npx tsx <file>`. What each
 * prints is what the reader sees; a library warning fails the example too.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from '@graphql-codegen/cli';
import type { CodegenConfig } from '@graphql-codegen/cli';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDemoGateway, type DemoGateway } from './demo-gateway.js';
import { exampleFiles } from './readme-blocks.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ISO = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`;

let project: string;
let gateway: DemoGateway;
const urlBefore = process.env['GATEWAY_URL'];

beforeAll(async () => {
  // Inside the checkout, so the examples' packages resolve from its node_modules.
  project = mkdtempSync(join(ROOT, '.readme-examples-'));
  symlinkSync(join(ROOT, 'schema'), join(project, 'schema'));
  for (const [name, body] of exampleFiles()) writeFileSync(join(project, name), body);
  gateway = await startDemoGateway();
  process.env['GATEWAY_URL'] = gateway.url;
});
afterAll(async () => {
  if (urlBefore === undefined) delete process.env['GATEWAY_URL'];
  else process.env['GATEWAY_URL'] = urlBefore;
  await gateway?.close();
  if (project) rmSync(project, { recursive: true, force: true });
});

/** Runs one example file to its end; resolves with the lines it printed. */
async function run(name: string): Promise<string[]> {
  const printed: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args.join(' ')));
  const warn = vi.spyOn(console, 'warn');
  const error = vi.spyOn(console, 'error');
  try {
    await import(join(project, name));
    expect(warn).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
  } finally {
    log.mockRestore();
    warn.mockRestore();
    error.mockRestore();
  }
  return printed;
}

describe('README client examples, run as printed against a demo gateway', { timeout: 30_000 }, () => {
  it('prints each example as a file of its own', () => {
    expect([...exampleFiles().keys()].sort()).toEqual(
      [
        'apollo-client.ts',
        'codegen.ts',
        'live-sse.ts',
        'live-websocket.ts',
        'operations.graphql',
        'persisted-queries.ts',
        'relay-environment.ts',
        'streamed-page.ts',
        'urql-client.ts',
        'upstream-mode.sh', // run by test/soak/readme-upstream-mode.test.ts
      ].sort(),
    );
  });

  it('codegen.ts: graphql-codegen types the operations with the scalar mapping', async () => {
    const { default: config } = (await import(join(project, 'codegen.ts'))) as { default: CodegenConfig };
    await generate({ ...config, cwd: project, silent: true }, true);
    const types = readFileSync(join(project, 'generated/operations.ts'), 'utf8');
    expect(types).toMatch(/export type AuditPageQuery = \{ auditEvents\??: /);
    expect(types).toMatch(/\{ uuid: string, timestamp: string, objectType: string \}/);
    expect(types).toContain('totalCount: number');
  });

  it('apollo-client.ts: two pages merged in the cache, every field of the records kept', async () => {
    expect(await run('apollo-client.ts')).toEqual([expect.stringMatching(new RegExp(`^50 of \\d+ records, newest ${ISO}$`))]);
  });

  it('urql-client.ts: two pages merged by graphcache, without a warning', async () => {
    expect(await run('urql-client.ts')).toEqual([expect.stringMatching(new RegExp(`^50 of \\d+ records, newest ${ISO}$`))]);
  });

  it('relay-environment.ts: an operation through the Relay network layer', async () => {
    const [line, ...rest] = await run('relay-environment.ts');
    expect(rest).toEqual([]);
    expect(Number(/^(\d+) records$/.exec(line ?? '')?.[1])).toBeGreaterThan(0);
  });

  it('live-sse.ts: two live records over graphql-sse', async () => {
    expect(await run('live-sse.ts')).toEqual([
      expect.stringMatching(new RegExp(`^live over SSE: \\S+ at ${ISO}$`)),
      expect.stringMatching(new RegExp(`^live over SSE: \\S+ at ${ISO}$`)),
    ]);
  });

  it('live-websocket.ts: two live logins over graphql-ws', async () => {
    expect(await run('live-websocket.ts')).toEqual([
      expect.stringMatching(new RegExp(`^live over WebSocket: LOGIN at ${ISO}$`)),
      expect.stringMatching(new RegExp(`^live over WebSocket: LOGIN at ${ISO}$`)),
    ]);
  });

  it('persisted-queries.ts: the first request is not found by hash and registers it, the second runs by hash', async () => {
    const notFound = () => gateway.logs().filter((line) => line['errors']?.includes('PERSISTED_QUERY_NOT_FOUND')).length;
    const before = notFound();
    expect(await run('persisted-queries.ts')).toEqual([
      expect.stringMatching(/^APQ, the hash, then the query: \d+ records$/),
      expect.stringMatching(/^APQ, the hash alone: \d+ records$/),
    ]);
    expect(notFound() - before).toBe(1);
  });

  it('streamed-page.ts: the first 50 rows first, the rest and the deferred fields later', async () => {
    const printed = await run('streamed-page.ts');
    expect(printed[0]).toBe('@stream: 50 rows, more to come');
    expect(printed.at(-1)).toBe('@stream: 1000 rows');
    expect(printed).toContainEqual(expect.stringMatching(/^@defer: totalCount \d+$/));
  });
});
