/**
 * The attacks on what the gateway holds, at full size, against the real entry point with the
 * production 256 MB heap and its default budget, in upstream mode over the simulator. Each used to
 * end the process ("Reached heap limit"): live subscriptions each carrying 240 KB of variables they
 * never use (about 900 over SSE, 500 over WebSocket), and 1000 POSTs of 240 KB sent at once while
 * the content library answers in 4 s. Now a new request past the memory budget (or the
 * subscription limit) is refused with RATE_LIMITED, and the process keeps serving.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_IDS } from '../../simulator/content-library-data.js';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { simulatorEnv } from '../helpers/simulator-env.js';
import { fatPosts, fatSseSubscriptions, fatWsSubscriptions, filesQuery, peakRssMb } from './attacks.js';

const KEY = 'soak-key';

describe('callers making the gateway hold memory, heap capped at the production 256 MB', () => {
  let sim: Simulator;
  let gateway: GatewayProcess;
  let port: number;
  beforeAll(async () => {
    sim = await startSimulator({ eventCount: 50 });
    gateway = runGateway({ NODE_OPTIONS: '--max-old-space-size=256', GATEWAY_API_KEYS: KEY, LOG_LEVEL: 'info', ...simulatorEnv(sim) });
    port = Number(new URL(await gateway.ready).port);
  });
  afterEach(() => sim.control.clearFaults());
  afterAll(async () => {
    await gateway?.stop('SIGKILL');
    await sim?.close();
  });

  const stillServing = async () => {
    expect(gateway.stderr()).not.toMatch(/heap out of memory|Reached heap limit/);
    expect(gateway.child.exitCode).toBeNull();
    const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ query: filesQuery(SESSION_IDS.ready) }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: { updateSessionFiles: expect.any(Array) } });
  };

  it('1200 SSE subscriptions with 240 KB of unused variables: the subscription limit refuses the last, the process serves on', async () => {
    const { outcome, sockets } = await fatSseSubscriptions(port, KEY, 1200);
    try {
      expect(outcome.failed).toBe(0);
      expect(outcome.ok).toBeLessThanOrEqual(1000);
      expect(outcome.refused).toBeGreaterThanOrEqual(200);
      await stillServing();
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    console.info(`fat SSE subscriptions: ${JSON.stringify(outcome)}, peak RSS ${peakRssMb(gateway.child.pid!).toFixed(0)} MB`);
  });

  it('600 WebSocket subscriptions with 240 KB of unused variables: past the budget they are refused, the process serves on', async () => {
    const { outcome, connections } = await fatWsSubscriptions(port, KEY, 600);
    try {
      expect(outcome.refused).toBeGreaterThan(0);
      expect(outcome.ok).toBeGreaterThan(0);
      await stillServing();
    } finally {
      for (const socket of connections) socket.socket.destroy();
    }
    console.info(`fat WebSocket subscriptions: ${JSON.stringify(outcome)}, peak RSS ${peakRssMb(gateway.child.pid!).toFixed(0)} MB`);
  });

  it('1000 POSTs of 240 KB at once while the content library answers in 4 s: past the budget they are refused, the rest answered', async () => {
    sim.control.setLatency(4000, 'files');
    const outcome = await fatPosts(port, KEY, 1000, filesQuery(SESSION_IDS.ready));
    expect(outcome.ok + outcome.refused + outcome.failed).toBe(1000);
    expect(outcome.refused).toBeGreaterThan(0);
    expect(outcome.ok).toBeGreaterThan(0);
    sim.control.clearFaults();
    await stillServing();
    console.info(`fat POSTs over a slow upstream: ${JSON.stringify(outcome)}, peak RSS ${peakRssMb(gateway.child.pid!).toFixed(0)} MB`);
  });
});
