/** Demo mode: the embedded simulator serves both upstreams on a loopback port. */
import type { Config } from './lib/config.js';
import { DEMO_CLIENT, DEMO_USER, SESSION_IDS, startSimulator } from '#simulator';

/** The simulator's seeded sessions the update-session examples open on in demo mode. */
export const demoSessionIds = Object.freeze({ withFiles: SESSION_IDS.mixed, ready: SESSION_IDS.ready });

export type DemoUpstreams = Awaited<ReturnType<typeof startDemoUpstreams>>;

export async function startDemoUpstreams(config: Config) {
  const simulator = await startSimulator({
    host: '127.0.0.1',
    port: config.simulatorPort,
    vendor: config.contentLibraryVendor,
    newEventIntervalMs: config.demoEventIntervalMs,
  });
  return {
    simulator,
    exampleSessionIds: demoSessionIds,
    config: Object.freeze<Config>({
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
