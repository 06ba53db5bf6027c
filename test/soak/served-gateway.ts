/**
 * A gateway wired as src/main.ts wires it (demo mode's simulator and examples, or upstream mode
 * against a simulator of its own), listening on a loopback port for a browser to open.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/lib/config.js';
import { demoSessionIds, startDemoUpstreams } from '../../src/demo.js';
import { exampleOperations } from '../../src/gateway/examples/index.js';
import { createLiveAudit } from '../../src/audit/live/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { startSimulator, type Simulator } from '../../simulator/index.js';
import { createUpstreams } from '../../src/upstream/index.js';
import { attachWebSockets } from '../../src/server/websocket/index.js';
import { yogaListener } from '../../src/server/compat/node-listener.js';
import { createGateway } from '../../src/gateway/yoga.js';
import { closeServer } from '../helpers/listen.js';
import { MemoryLog } from '../helpers/memory-log.js';
import { simulatorEnv } from '../helpers/simulator-env.js';

export interface ServedGateway {
  /** The GraphQL endpoint and GraphiQL page, e.g. http://127.0.0.1:41234/graphql */
  readonly url: string;
  readonly config: Config;
  close(): Promise<void>;
}

/** New audit records often and polled often, so that a live tab shows one within a second. */
const LIVE_ENV = { DEMO_EVENT_INTERVAL_MS: '200', AUDIT_LIVE_POLL_MS: '100', LOG_LEVEL: 'warn' };

/** Demo mode: no upstream URL, the simulator started by the gateway, its sessions in the examples. */
export async function startDemoGateway(): Promise<ServedGateway> {
  const demo = await startDemoUpstreams(loadConfig({ ...LIVE_ENV, SIMULATOR_PORT: '0' }));
  return serve(demo.config, exampleOperations(demoSessionIds), () => demo.simulator.close());
}

/** Upstream mode against a simulator of its own, callers authenticated by `apiKey`. */
export async function startUpstreamGateway(apiKey: string): Promise<ServedGateway & { readonly sim: Simulator }> {
  const sim = await startSimulator({ host: '127.0.0.1', newEventIntervalMs: Number(LIVE_ENV.DEMO_EVENT_INTERVAL_MS) });
  const config = loadConfig({ ...LIVE_ENV, ...simulatorEnv(sim), GATEWAY_API_KEYS: apiKey });
  return { sim, ...(await serve(config, exampleOperations(), () => sim.close())) };
}

async function serve(config: Config, examples: ReturnType<typeof exampleOperations>, closeUpstream: () => Promise<void>): Promise<ServedGateway> {
  const log = createLogger({ level: config.logLevel, destination: new MemoryLog() });
  const upstreams = createUpstreams(config);
  const liveAudit = createLiveAudit(config, upstreams, log);
  const yoga = createGateway({ config, upstreams, log, examples, liveAudit });
  const server = createServer(yogaListener(yoga, log));
  const webSockets = attachWebSockets(server, { yoga, liveAudit, log, maxPayloadBytes: config.maxRequestBytes });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  // The first view of the page builds GraphiQL's assets (hashed, compressed): done here, while
  // the browser starts, rather than inside a test's time.
  await (await fetch(url, { headers: { accept: 'text/html' } })).arrayBuffer();
  return {
    url,
    config,
    async close() {
      await webSockets.close();
      await closeServer(server);
      await upstreams.close();
      await closeUpstream();
    },
  };
}
