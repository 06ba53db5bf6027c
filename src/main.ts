/** The process: configuration, demo upstreams, the HTTP listener and a graceful shutdown. */
import { once } from 'node:events';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from './lib/config.js';
import { createGatewayServer } from './server/http-server.js';
import type { DemoUpstreams } from './demo.js';

/** Start-up refusals: one line on stderr, exit code 1, no stack. */
function refuse(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const NOT_AN_ADDRESS = new Set(['EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EINVAL']);

/** Why a listener could not start, naming the variable to change. */
function listenProblem(error: NodeJS.ErrnoException, portVariable: string, port: number, host: string): string {
  if (error.code === 'EADDRINUSE') return `${portVariable}: port ${port} on ${host} is already in use`;
  if (error.code === 'EACCES') return `${portVariable}: no permission to listen on port ${port}`;
  if (NOT_AN_ADDRESS.has(error.code ?? '')) return `HOST: cannot listen on "${host}" (${error.code}): not an address of this machine`;
  return `${portVariable}/HOST: cannot listen on ${host}:${port} (${error.code ?? error.message})`;
}

async function main() {
  let config = loadConfig();
  const [{ createLogger }, { installLastResort }] = await Promise.all([import('./lib/logger.js'), import('./server/last-resort.js')]);
  const log = createLogger({ level: config.logLevel, pretty: config.logPretty, traceIds: !!config.tracing });
  installLastResort(log, process, (code) => process.exit(code));

  let draining = false;
  // The listener binds while the gateway loads, so a bad PORT or HOST is refused at once.
  let gatewayBuilt!: (serve: RequestListener) => void;
  const gateway = new Promise<RequestListener>((resolve) => (gatewayBuilt = resolve));
  const { server, registerMetrics, watchWebSocket, memoryBudget } = createGatewayServer(
    (request, response) => {
      // While draining, every answer closes its connection, so no keep-alive socket outlives the drain.
      if (draining) response.setHeader('connection', 'close');
      void gateway.then((serve) => serve(request, response));
    },
    { ...config.connections, maxRequestBytes: config.maxRequestBytes },
    log,
  );
  const listening = once(server.listen(config.port, config.host), 'listening').then(
    () => server.address() as AddressInfo,
    (error: NodeJS.ErrnoException) => refuse(`Cannot start the gateway: ${listenProblem(error, 'PORT', config.port, config.host)}`),
  );
  let demo: DemoUpstreams | undefined;
  if (config.mode === 'demo') {
    // A taken PORT is the one thing said, before any simulator starts or logs.
    await listening;
    const { startDemoUpstreams } = await import('./demo.js');
    demo = await startDemoUpstreams(config).catch((error: NodeJS.ErrnoException) =>
      refuse(`Cannot start the demo simulator: ${listenProblem(error, 'SIMULATOR_PORT', config.simulatorPort, '127.0.0.1')}`),
    );
    config = demo.config;
    log.warn(
      { simulator: demo.simulator.url },
      `DEMO MODE: no upstream URL is configured, so both upstreams are served by the embedded simulator at ${demo.simulator.url} ` +
        'with generated data. Set IDENTITY_BASE_URL and/or CONTENT_LIBRARY_URL to use real services.',
    );
  }

  // Loaded once the configuration is accepted, so that a refusal answers fast.
  const [
    { exampleOperations },
    { createMetrics },
    { createUpstreams },
    { createLiveAudit },
    { attachWebSockets },
    { createGateway },
    { yogaListener },
  ] = await Promise.all([
    import('./gateway/examples/index.js'),
    import('./gateway/plugins/observability/metrics.js'),
    import('./upstream/index.js'),
    import('./audit/live/index.js'),
    import('./server/websocket/index.js'),
    import('./gateway/yoga.js'),
    import('./server/compat/node-listener.js'),
  ]);
  const examples = exampleOperations(demo?.exampleSessionIds);
  const metrics = createMetrics();
  registerMetrics(metrics.registry);
  // ioredis is loaded only when replicas share state.
  const sharedStore = config.redis
    ? (await import('./upstream/shared-store/store.js')).createSharedStore(config.redis, log)
    : undefined;
  if (sharedStore) metrics.observeSharedStore(sharedStore);
  // OpenTelemetry's SDK is loaded only when tracing is configured.
  const tracing = config.tracing ? (await import('./gateway/plugins/observability/tracing.js')).createTracing(config.tracing) : undefined;
  const upstreams = createUpstreams(config, {
    events: metrics.upstreamEvents,
    sharedStore,
    ...(tracing ? { tracer: tracing.upstreamTracer, interceptors: [tracing.upstreamInterceptor] } : {}),
  });
  const liveAudit = createLiveAudit(config, upstreams, log, { events: metrics.liveAuditEvents }, sharedStore);
  metrics.observeLiveAudit(liveAudit);
  const yoga = createGateway({ config, upstreams, log, metrics, tracing, examples, isReady: () => !draining, liveAudit, memoryBudget, sharedStore });
  gatewayBuilt(yogaListener(yoga, log));
  const address = await listening;
  // Attached once listening: ws re-emits the server's listen errors, which are reported above.
  const webSockets = attachWebSockets(server, {
    yoga,
    liveAudit,
    log,
    maxPayloadBytes: config.maxRequestBytes,
    watchSocket: watchWebSocket,
  });
  log.info(
    { port: address.port, host: config.host, mode: config.mode, identity: !!config.identity, contentLibrary: !!config.contentLibrary },
    `Gateway ready at http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${address.port}/graphql`,
  );

  const stop = async () => {
    await upstreams.close();
    await sharedStore?.close();
    await tracing?.shutdown();
    await demo?.simulator.close();
    log.info('stopped');
    process.exit(0);
  };
  const shutdown = (signal: string) => {
    if (draining) return;
    draining = true;
    log.info(
      { signal, delayMs: config.shutdownDelayMs, graceMs: config.shutdownGraceMs },
      'draining: /readyz answers 503; new connections are accepted until the delay is over',
    );
    // Live streams end now (`complete`), so their connections do not hold the drain open.
    void webSockets.close();
    // Load balancers need a few probes to see the 503 and stop sending; only then stop listening.
    setTimeout(() => {
      log.info('draining: listener closed, finishing in-flight requests');
      server.close(() => void stop());
      // A connection busy at close() becomes idle after its (connection: close) answer.
      setInterval(() => server.closeIdleConnections(), 50).unref();
      setTimeout(() => {
        log.warn('grace period over: closing remaining connections');
        server.closeAllConnections();
      }, config.shutdownGraceMs).unref();
    }, config.shutdownDelayMs);
  };
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => shutdown(signal));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) refuse(error.message);
  refuse(`Gateway failed to start: ${error instanceof Error ? error.message : String(error)}`);
});
