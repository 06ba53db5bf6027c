/** The process: configuration, demo upstreams, the HTTP listener and a graceful shutdown. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { createMetrics } from './plugins/metrics.js';
import { createUpstreams } from './upstream/index.js';
import { createLiveAudit } from './live/index.js';
import { attachWebSockets } from './websocket.js';
import { createGateway } from './yoga.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

async function main() {
  let config = readConfig();
  const log = createLogger({ level: config.logLevel });

  let closeSimulator = async () => {};
  if (config.mode === 'demo') {
    const { startDemoUpstreams } = await import('./demo.js');
    const demo = await startDemoUpstreams(config);
    config = demo.config;
    closeSimulator = () => demo.simulator.close();
    log.warn(
      { simulator: demo.simulator.url },
      'DEMO MODE: no upstream URL is configured, so both upstreams are served by the embedded simulator ' +
        'with generated data. Set IDENTITY_BASE_URL and/or CONTENT_LIBRARY_URL to use real services.',
    );
  }

  const metrics = createMetrics();
  const upstreams = createUpstreams(config, log, { events: metrics.upstreamEvents });
  let draining = false;
  // OpenTelemetry's SDK is loaded only when tracing is configured.
  const tracing = config.tracing ? (await import('./plugins/tracing.js')).createTracing(config.tracing) : undefined;
  const liveAudit = createLiveAudit(config, upstreams, log);
  const yoga = createGateway({ config, upstreams, log, metrics, tracing, isReady: () => !draining, liveAudit });
  const server = createServer(yoga);
  const webSockets = attachWebSockets(server, { yoga, liveAudit, log, maxPayloadBytes: config.maxRequestBytes });
  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    log.info(
      { port, host: config.host, mode: config.mode, identity: !!config.identity, contentLibrary: !!config.contentLibrary },
      `Gateway ready at http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}/graphql`,
    );
  });

  const shutdown = (signal: string) => {
    if (draining) return;
    draining = true;
    log.info({ signal, graceMs: config.shutdownGraceMs }, 'draining: finishing in-flight requests');
    // Live streams end now (`complete`), so their connections do not hold the drain open.
    void webSockets.close();
    // Stop accepting; idle keep-alive sockets close now, busy ones after their response.
    server.close(async () => {
      await upstreams.close();
      await tracing?.shutdown();
      await closeSimulator();
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => {
      log.warn('grace period over: closing remaining connections');
      server.closeAllConnections();
    }, config.shutdownGraceMs).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Gateway failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
