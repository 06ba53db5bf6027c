/**
 * The soak's fault schedule: the simulator's switches, one phase after another, each phase an
 * equal share of the run (a minute of a 10-minute run, 11 s of a 2-minute one), so a short run
 * still visits every fault. Faults of a phase are cleared when it ends.
 */
import { request } from 'undici';

export interface FaultControls {
  /** POST /__simulator/<path> on the simulator of the moment; failures are ignored (it may be down). */
  readonly control: (path: string, body?: unknown) => Promise<void>;
  /** Stops the simulator, waits `downMs`, starts it again on the same port. */
  readonly restart: (downMs: number) => Promise<void>;
}

export interface Phase {
  readonly name: string;
  /** Run when the phase begins. */
  readonly begin?: (c: FaultControls, phaseMs: number) => Promise<void>;
  /** Run every `everyMs` while the phase lasts. */
  readonly tick?: { readonly everyMs: number; readonly run: (c: FaultControls) => Promise<void> };
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
export const RESTART_DOWN_MS = 9000;

export const PHASES: readonly Phase[] = [
  { name: 'calm' },
  {
    name: '5xx bursts',
    tick: { everyMs: 3000, run: (c) => c.control('fail-next', { count: 6, status: pick([500, 502, 503, 504]) }) },
  },
  { name: 'latency 1.5 s', begin: (c) => c.control('latency', { ms: 1500 }) },
  { name: 'latency 3 s', begin: (c) => c.control('latency', { ms: 3000 }) },
  {
    name: 'expired tokens and sessions',
    begin: (c) => c.control('expire-tokens', {}),
    tick: {
      everyMs: 4000,
      run: (c) => pick([() => c.control('expire-tokens', { refreshTokensToo: true }), () => c.control('expire-sessions'), () => c.control('expire-tokens', {})])(),
    },
  },
  {
    name: 'connection resets',
    tick: {
      everyMs: 1500,
      run: (c) => c.control('hostile-next', { route: pick(['audit', 'files', 'token', 'session']), kind: pick(['reset-mid-body', 'drop-connection']) }),
    },
  },
  {
    name: 'malformed, oversize and deep records',
    tick: {
      everyMs: 1500,
      run: (c) =>
        pick([
          () => c.control('malform-next', { route: pick(['audit', 'files']), kind: pick(['shape', 'truncated']) }),
          () => c.control('hostile-next', { route: 'audit', kind: pick(['huge-record', 'deep-record']) }),
          () => c.control('hostile-next', { route: pick(['audit', 'files']), kind: 'oversize-body' }),
        ])(),
    },
  },
  { name: 'endless bodies', tick: { everyMs: 2500, run: (c) => c.control('hostile-next', { route: pick(['audit', 'files']), kind: 'endless-body' }) } },
  { name: 'restart, 9 s down', begin: (c) => c.restart(RESTART_DOWN_MS) },
  { name: 'audit report outage', begin: (c) => c.control('fail-next', { count: 1_000_000, status: 503, route: 'audit' }) },
  { name: 'calm again' },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs every phase for `phaseMs` (a restart may take longer), clearing the faults after each. */
export async function runSchedule(c: FaultControls, phaseMs: number, onPhase: (name: string) => void): Promise<void> {
  for (const phase of PHASES) {
    onPhase(phase.name);
    const end = Date.now() + phaseMs;
    await phase.begin?.(c, phaseMs);
    while (phase.tick && Date.now() + phase.tick.everyMs < end) {
      await sleep(phase.tick.everyMs);
      await phase.tick.run(c);
    }
    await sleep(Math.max(0, end - Date.now()));
    await c.control('clear-faults');
  }
}

/** A FaultControls.control for the simulator at `url()`. */
export const controlAt =
  (url: () => string) =>
  async (path: string, body: unknown = {}): Promise<void> => {
    try {
      const res = await request(`${url()}/__simulator/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        headersTimeout: 5000,
      });
      await res.body.dump();
    } catch {
      // The simulator is restarting: the fault would have nothing to apply to.
    }
  };
