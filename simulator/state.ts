/** Everything the routes and the control object share, built once per simulator. */
import { randomBytes } from 'node:crypto';
import type { AuditRecordData, SimulatorOptions } from './types.js';
import { AuditStore } from './audit-store.js';
import { generateSeedEvents } from './audit-seed.js';
import { createEventFactory, type EventFactory } from './audit-generator.js';
import { createTenant } from './audit-tenant.js';
import { CallCounters } from './counters.js';
import { FaultSwitches } from './faults.js';
import { mulberry32 } from './random.js';
import { TokenStore } from './token-store.js';
import { UPDATE_SESSIONS, type SimulatedFileInfo } from './content-library-data.js';
import { WireLog } from './wire-log.js';

export const DEMO_CLIENT: { id: string; secret: string } = Object.freeze({ id: 'gateway-demo', secret: 'demo-secret' });
export const DEMO_USER: { username: string; password: string } = Object.freeze({
  username: 'demo@vsphere.local',
  password: 'demo-password',
});

/** The tenant host named in token claims; tenantId `acme` is its host-name prefix, as upstream. */
const TOKEN_ISSUER = 'https://acme.identity.example.com';

export const DEFAULT_EVENT_COUNT = 24_000;
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 10_799;

/** Content library login sessions (vmware-api-session-id values). */
export class LoginSessions {
  private readonly ids = new Set<string>();

  create(): string {
    const id = randomBytes(16).toString('hex');
    this.ids.add(id);
    return id;
  }

  isValid(id: string | undefined): boolean {
    return id !== undefined && this.ids.has(id);
  }

  delete(id: string): boolean {
    return this.ids.delete(id);
  }

  expireAll(): void {
    this.ids.clear();
  }
}

export interface SimulatorState {
  readonly now: () => number;
  readonly vendor: string;
  /** client id -> secret */
  readonly clients: ReadonlyMap<string, string>;
  /** Content library logins; null: no session required. */
  readonly users: readonly { username: string; password: string }[] | null;
  readonly audit: AuditStore;
  readonly tokens: TokenStore;
  readonly loginSessions: LoginSessions;
  readonly updateSessions: ReadonlyMap<string, readonly SimulatedFileInfo[]>;
  readonly faults: FaultSwitches;
  readonly counters: CallCounters;
  /** What was received, request by request (see wire-log.ts). */
  readonly wire: WireLog;
  /** Builds inserted events from its own seeded stream, so inserts are deterministic too. */
  readonly insertedEvents: EventFactory;
  readonly defaultTokenLifetimeSeconds: number;
  tokenLifetimeSeconds: number;
}

export function createState(options: SimulatorOptions): SimulatorState {
  const now = options.now ?? Date.now;
  const seed = options.seed ?? 1;
  const eventCount = options.eventCount ?? DEFAULT_EVENT_COUNT;
  if (!Number.isInteger(eventCount) || eventCount < 0) throw new RangeError('eventCount must be a non-negative integer');
  const lifetime = options.tokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS;
  const records: AuditRecordData[] = generateSeedEvents(seed, now(), eventCount);
  return {
    now,
    vendor: options.vendor ?? 'vmware',
    clients: new Map((options.clients ?? [DEMO_CLIENT]).map((c) => [c.id, c.secret])),
    users: options.users === undefined ? [DEMO_USER] : options.users,
    audit: new AuditStore(records),
    tokens: new TokenStore(now, TOKEN_ISSUER),
    loginSessions: new LoginSessions(),
    updateSessions: new Map(UPDATE_SESSIONS.map((s) => [s.id, s.files])),
    faults: new FaultSwitches(),
    counters: new CallCounters(),
    wire: new WireLog(),
    insertedEvents: createEventFactory(createTenant(seed), mulberry32(seed ^ 0x2545f491)),
    defaultTokenLifetimeSeconds: lifetime,
    tokenLifetimeSeconds: lifetime,
  };
}
