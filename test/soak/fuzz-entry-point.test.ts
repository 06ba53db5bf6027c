/**
 * The hostile-caller fuzzing at full size against the real entry point over HTTP (demo mode,
 * production heap cap): every answer carries contract codes, and afterwards the process is still
 * running, serving, and within its memory bound. The same properties in-process, fewer runs:
 * test/hardening/fuzz.test.ts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS } from '../../simulator/index.js';
import type { Answer } from '../hardening/fuzz/contract-answer.js';
import { contractProperties } from '../hardening/fuzz/contract-properties.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';

/** Peak resident memory of a process, from /proc (Linux). */
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

describe('hostile callers against the running gateway (real HTTP, demo mode, heap capped at 256 MB)', () => {
  let gateway: GatewayProcess;
  let url: string;
  beforeAll(async () => {
    gateway = runGateway({ NODE_OPTIONS: '--max-old-space-size=256', LOG_LEVEL: 'info' });
    url = await gateway.ready;
    // The start-up tests start gateways at the same time; on a busy machine this one waits its turn.
  }, 90_000);
  afterAll(async () => {
    await gateway.stop('SIGKILL');
  });

  const post = async (payload: unknown): Promise<Answer> => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(payload),
    });
    return { status: response.status, body: (await response.json()) as Answer['body'] };
  };

  contractProperties(post, { documents: 100, variables: 60, representations: 60 });

  it('is still running, serving, and within its memory bound afterwards', async () => {
    expect(gateway.child.exitCode).toBeNull();
    const answer = await post({ query: `{ updateSession(id: "${SESSION_IDS.ready}") { id } }` });
    expect(answer.body).toEqual({ data: { updateSession: { id: SESSION_IDS.ready } } });
    expect(peakRssMb(gateway.child.pid!)).toBeLessThan(450);
  });
});
