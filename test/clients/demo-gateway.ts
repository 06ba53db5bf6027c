/**
 * A gateway in demo mode, wired as src/main.ts wires it (the embedded simulator, HTTP, SSE and
 * WebSocket on one listener), in-process on 127.0.0.1 and a free port. Demo records arrive and are
 * polled every 100 ms, so live examples print within a second.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/lib/config.js';
import { startDemoUpstreams } from '../../src/demo.js';
import { createLiveAudit } from '../../src/audit/live/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { createUpstreams } from '../../src/upstream/index.js';
import { attachWebSockets } from '../../src/server/websocket/index.js';
import { createGateway } from '../../src/gateway/yoga.js';
import { closeServer } from '../helpers/listen.js';
import { MemoryLog } from '../helpers/memory-log.js';

export interface DemoGateway {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:41234/graphql */
  readonly url: string;
  logs(): Record<string, any>[];
  close(): Promise<void>;
}

export async function startDemoGateway(): Promise<DemoGateway> {
  const settings = loadConfig({ DEMO_EVENT_INTERVAL_MS: '100', AUDIT_LIVE_POLL_MS: '100', LOG_LEVEL: 'info' });
  if (settings.mode !== 'demo') throw new Error(`expected demo mode, got ${settings.mode}`);
  const { config, simulator } = await startDemoUpstreams(settings);
  const memory = new MemoryLog();
  const log = createLogger({ level: config.logLevel, destination: memory });
  const upstreams = createUpstreams(config);
  const liveAudit = createLiveAudit(config, upstreams, log);
  const yoga = createGateway({ config, upstreams, log, liveAudit });
  const server = createServer((request, response) => void yoga(request, response));
  const webSockets = attachWebSockets(server, { yoga, liveAudit, log, maxPayloadBytes: config.maxRequestBytes });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    logs: () => memory.lines(),
    async close() {
      await webSockets.close();
      await closeServer(server);
      await upstreams.close();
      await simulator.close();
    },
  };
}
