/**
 * The hostile-caller fuzzing at full size against the real entry point over HTTP (demo mode,
 * production heap cap): every answer carries contract codes, and afterwards the process is still
 * running, serving, and within its memory bound. The same properties in-process, fewer runs:
 * test/hardening/fuzz.test.ts.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS } from '../../simulator/index.js';
import { expectContractAnswer, type Answer } from '../hardening/fuzz/contract-answer.js';
import { document, mangledDocument, representations, variables } from '../hardening/fuzz/arbitraries.js';
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

  it('documents: every answer carries contract codes', async () => {
    await fc.assert(
      fc.asyncProperty(mangledDocument, async (query) => {
        expectContractAnswer(await post({ query }), query);
      }),
      { numRuns: 100 },
    );
  });

  it('documents with variables of any shape', async () => {
    await fc.assert(
      fc.asyncProperty(document, variables, async (query, vars) => {
        expectContractAnswer(await post({ query, variables: vars }), { query, vars });
      }),
      { numRuns: 60 },
    );
  });

  it('_entities representations: items settle on their own', async () => {
    const query = 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename ... on UpdateSession { id files { name } } } }';
    await fc.assert(
      fc.asyncProperty(representations, async (r) => {
        const answer = await post({ query, variables: { r } });
        expectContractAnswer(answer, r);
        // Whenever the list coerces and is within the cap, there is one item per representation.
        const coerces = r.every((item) => item !== null);
        const entities = (answer.body.data as { _entities?: unknown[] } | null | undefined)?._entities;
        if (coerces && r.length <= 100) expect(entities, JSON.stringify(r).slice(0, 500)).toHaveLength(r.length);
      }),
      { numRuns: 60 },
    );
  });

  it('is still running, serving, and within its memory bound afterwards', async () => {
    expect(gateway.child.exitCode).toBeNull();
    const answer = await post({ query: `{ updateSession(id: "${SESSION_IDS.ready}") { id } }` });
    expect(answer.body).toEqual({ data: { updateSession: { id: SESSION_IDS.ready } } });
    expect(peakRssMb(gateway.child.pid!)).toBeLessThan(450);
  });
});
