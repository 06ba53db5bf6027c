/**
 * The bench's load runner: servers measured in alternating rounds are each charged exactly their
 * own phases, whatever order the machine's drift would otherwise favour.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runLoad, runRounds, type Send } from '../../bench/load.js';

/** A server that answers after `ms`, counting its requests; `failEvery` makes every nth one fail. */
function fakeServer(ms: number, failEvery = 0) {
  let sent = 0;
  const send: Send = async () => {
    sent++;
    await sleep(ms);
    if (failEvery && sent % failEvery === 0) throw new Error(`failure ${sent}`);
    return 100;
  };
  return { send, sent: () => sent };
}

describe('runRounds', () => {
  it('alternates the sides, reversing the order every other round, and warms each up once first', async () => {
    const order: string[] = [];
    const a = fakeServer(1);
    const b = fakeServer(1);
    const results = await runRounds(
      [
        { name: 'a', send: a.send },
        { name: 'b', send: b.send },
      ],
      { concurrency: 2, warmupMs: 30, durationMs: 120, rounds: 4, around: async (side, measure) => { order.push(side); await measure(); } },
    );
    expect(order).toEqual(['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a']);
    for (const [name, server] of [['a', a], ['b', b]] as const) {
      const result = results[name]!;
      // Every request sent is in `sent`; the warm-up's are not in `answered`.
      expect(result.sent).toBe(server.sent());
      expect(result.answered).toBe(result.requests);
      expect(result.answered).toBeGreaterThan(0);
      expect(result.answered).toBeLessThan(result.sent);
      expect(result.durationMs).toBeGreaterThanOrEqual(120);
      expect(result.bytesPerResponse).toBe(100);
    }
  });

  it('runs each side unmeasured right before each of its measured phases, so none is measured cold', async () => {
    let lastSender = '';
    const sender = (name: string) => {
      const server = fakeServer(1);
      return async () => {
        lastSender = name;
        return server.send();
      };
    };
    const seen: string[] = [];
    const results = await runRounds(
      [
        { name: 'a', send: sender('a') },
        { name: 'b', send: sender('b') },
      ],
      {
        concurrency: 2,
        warmupMs: 20,
        durationMs: 160,
        rounds: 4,
        around: async (side, measure) => {
          seen.push(`${side} after ${lastSender}`);
          await measure();
        },
      },
    );
    expect(seen).toEqual(['a after a', 'b after b', 'b after b', 'a after a', 'a after a', 'b after b', 'b after b', 'a after a']);
    // One cost per measured round, adding up to the totals.
    for (const name of ['a', 'b']) {
      const result = results[name]!;
      expect(result.phases).toHaveLength(4);
      expect(result.phases.reduce((sum, phase) => sum + phase.answered, 0)).toBe(result.answered);
    }
  });

  it("charges each side only its own phases' requests, latencies and errors", async () => {
    // Latencies far apart, so that what a busy machine adds to the fast side's cannot pass for the slow side's.
    const fast = fakeServer(2);
    const slow = fakeServer(200, 5);
    const results = await runRounds(
      [
        { name: 'fast', send: fast.send },
        { name: 'slow', send: slow.send },
      ],
      { concurrency: 1, warmupMs: 0, settleMs: 0, durationMs: 1000, rounds: 2 },
    );
    expect(results['fast']!.errors).toBe(0);
    expect(results['fast']!.latencyMs.max).toBeLessThan(150);
    expect(results['slow']!.latencyMs.p50).toBeGreaterThanOrEqual(199);
    // Every fifth request of the slow side fails: counted against it, answered but not a latency.
    expect(results['slow']!.errors).toBe(Math.floor(slow.sent() / 5));
    expect(results['slow']!.firstError).toBe('failure 5');
    expect(results['slow']!.answered).toBe(slow.sent());
    expect(results['slow']!.requests).toBe(slow.sent() - results['slow']!.errors);
    expect(results['fast']!.requests).toBeGreaterThan(3 * results['slow']!.requests);
  });

  it('samples the CPU of the processes named, summed over the rounds', async () => {
    const server = fakeServer(1);
    let spin = 0;
    const busy: Send = async () => {
      const end = performance.now() + 2;
      while (performance.now() < end) spin++;
      return server.send();
    };
    const { self } = await runRounds([{ name: 'self', send: busy, cpuOf: { me: process.pid } }], {
      concurrency: 1,
      warmupMs: 0,
      durationMs: 150,
      rounds: 3,
    });
    // This process spun about 2 ms of CPU per request, in every round.
    expect(self!.cpuMs['me']).toBeGreaterThanOrEqual(1.5 * self!.answered);
    expect(spin).toBeGreaterThan(0);
  });
});

describe('runLoad', () => {
  it('is one side in one round', async () => {
    const server = fakeServer(1);
    const result = await runLoad(server.send, { concurrency: 3, warmupMs: 20, durationMs: 60 });
    expect(result.concurrency).toBe(3);
    expect(result.sent).toBe(server.sent());
    expect(result.requests).toBeGreaterThan(0);
    expect(result.requests).toBeLessThan(result.sent);
    expect((result.rps * result.durationMs) / 1000 / result.requests).toBeCloseTo(1, 1);
  });
});
