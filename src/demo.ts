/** Demo mode: the embedded simulator serves both upstreams on a loopback port. */
import type { Config } from './config.js';
import { DEMO_CLIENT, DEMO_USER, startSimulator, type Simulator } from './simulator/index.js';

export async function startDemoUpstreams(config: Config): Promise<{ config: Config; simulator: Simulator }> {
  const simulator = await startSimulator({
    host: '127.0.0.1',
    port: 0,
    vendor: config.contentLibraryVendor,
    newEventIntervalMs: config.demoEventIntervalMs,
  });
  return {
    simulator,
    config: Object.freeze({
      ...config,
      identity: Object.freeze({
        baseUrl: simulator.url,
        clientId: DEMO_CLIENT.id,
        clientSecret: DEMO_CLIENT.secret,
        scope: undefined,
      }),
      contentLibrary: Object.freeze({
        url: simulator.url,
        vendor: config.contentLibraryVendor,
        credentials: Object.freeze({ ...DEMO_USER }),
      }),
    }),
  };
}
