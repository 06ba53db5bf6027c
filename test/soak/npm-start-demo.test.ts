/**
 * The README's first command, `npm start` (src/main.ts through tsx), in demo mode: it starts, serves
 * a query over simulator data, and exits 0 on SIGINT. test/startup.test.ts checks the same start-up
 * in detail on the production build, which starts in a fraction of tsx's CPU time.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runGateway, type GatewayProcess } from '../helpers/process.js';

const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

let gateway: GatewayProcess | undefined;
afterAll(async () => {
  await gateway?.stop('SIGKILL');
});

describe('npm start in demo mode', { timeout: 90_000 }, () => {
  it('starts, serves a query over simulator data, and exits 0 on SIGINT', async () => {
    expect(scripts['start']).toBe('tsx src/main.ts');
    gateway = runGateway({ SHUTDOWN_DELAY_MS: '200' });
    const url = await gateway.ready;
    expect(gateway.stdout()).toMatch(/DEMO MODE/);

    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ auditEvents(first: 3) { edges { cursor } } }' }),
    });
    const body = (await response.json()) as { data?: { auditEvents: { edges: unknown[] } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data?.auditEvents.edges).toHaveLength(3);

    expect(await gateway.stop('SIGINT')).toBe(0);
  });
});
