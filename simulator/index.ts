/**
 * Embedded upstream simulator: one node:http server that behaves like both upstreams as
 * `shared/spec/upstream-facts.md` describes them, with seeded data and fault switches.
 *
 * Identity service:
 *   POST /SAAS/auth/oauthtoken            client_credentials / refresh_token (refresh tokens rotate, single use)
 *   GET  /analytics/reports/audit/        bearer token; fromMillis, toMillis, objectType, action, pageSize, startIndex
 * Content library (<vendor> = options.vendor, default vmware):
 *   POST /rest/com/<vendor>/cis/session   HTTP Basic -> {"value": session id} + cookie (DELETE logs out)
 *   GET  /rest/com/<vendor>/content/library/item/updatesession/file?update_session_id=ID
 *        header vmware-api-session-id (unless users: null); ids in SESSION_IDS
 * Control surface: /__simulator/... (see control-http.ts), the same operations as `control`.
 */
import type { AddressInfo } from 'node:net';
import type { Simulator, SimulatorOptions } from './types.js';
import { createControl } from './control.js';
import { createSimulatorServer } from './server.js';
import { createState } from './state.js';
import { startEventTicker } from './live-events.js';

export type {
  AuditEventFilter,
  AuditRecordData,
  HostileKind,
  MalformKind,
  Simulator,
  SimulatorControl,
  SimulatorCounters,
  SimulatorOptions,
  SimulatorRoute,
  SimulatorWire,
  WireRequest,
} from './types.js';
export { SIMULATOR_ROUTES } from './types.js';
export { DEMO_CLIENT, DEMO_USER, DEFAULT_EVENT_COUNT, DEFAULT_TOKEN_LIFETIME_SECONDS } from './state.js';
export { MISSING_SESSION_ID, SESSION_IDS } from './content-library-data.js';
export { AUDIT_HEADER, DEFAULT_WINDOW_MS, MAX_PAGE_SIZE } from './audit-route.js';
export { SESSION_HEADER } from './content-library-route.js';
export { recordTimestamp } from './audit-seed.js';

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const host = options.host ?? '127.0.0.1';
  const state = createState(options);
  const control = createControl(state);
  const server = createSimulatorServer(state, control);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const stopTicker = options.newEventIntervalMs ? startEventTicker(control, options.newEventIntervalMs) : undefined;
  let closing: Promise<void> | undefined;
  return {
    url,
    control,
    wire: state.wire,
    close() {
      stopTicker?.();
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive sockets and answers held back by latency would otherwise delay close.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
