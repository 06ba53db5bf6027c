/** Operator mistakes show as what they are: a wrong path is not a missing session, a refused connection names its target. */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MISSING_SESSION_ID, SESSION_IDS } from '../../simulator/index.js';
import { startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

let harness: UpstreamHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const failureLines = (h: UpstreamHarness) => h.memory.lines().filter((line) => line.msg === 'upstream call failed');

describe('a content library path that does not exist (wrong CONTENT_LIBRARY_VENDOR)', () => {
  it('is UPSTREAM_INVALID_RESPONSE, and the log names the path', async () => {
    harness = await startUpstreamHarness({
      simulator: { users: null },
      env: { CONTENT_LIBRARY_VENDOR: 'acme', CONTENT_LIBRARY_USERNAME: undefined, CONTENT_LIBRARY_PASSWORD: undefined },
    });
    const error = await harness.upstreams.contentLibrary!.listUpdateSessionFiles(SESSION_IDS.ready, harness.call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE' });
    expect(error.message).not.toMatch(/not found/i);
    const [line] = failureLines(harness);
    expect(line).toMatchObject({ status: 404, path: '/rest/com/acme/content/library/item/updatesession/file' });
    expect(JSON.stringify(line)).toMatch(/no such path upstream: \/rest\/com\/acme\/content\/library/);
  });

  it('while a vAPI not_found for a missing session stays NOT_FOUND', async () => {
    harness = await startUpstreamHarness();
    const error = await harness.upstreams.contentLibrary!.listUpdateSessionFiles(MISSING_SESSION_ID, harness.call).catch((e) => e);
    expect(error).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('a refused connection', () => {
  it('logs the host and port it tried', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    harness = await startUpstreamHarness({
      env: { CONTENT_LIBRARY_URL: `http://127.0.0.1:${closedPort}`, UPSTREAM_TIMEOUT_MS: '1000' },
      upstream: { retry: { maxRetries: 1, baseDelayMs: 10 } },
    });
    const error = await harness.upstreams.contentLibrary!.listUpdateSessionFiles(SESSION_IDS.ready, harness.call).catch((e) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    const lines = failureLines(harness);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line.address === `127.0.0.1:${closedPort}`)).toBe(true);
  });
});
