/** Public types of the upstream simulator (see index.ts for the entry point). */

/** The four upstream operations the simulator serves; fault switches target one or all of them. */
export type SimulatorRoute = 'token' | 'audit' | 'session' | 'files';
export const SIMULATOR_ROUTES: readonly SimulatorRoute[] = ['token', 'audit', 'session', 'files'];

export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** Same seed (and same clock at start) => same audit data. */
  seed?: number;
  /** Clock in epoch ms; seed data is generated relative to now() at start. */
  now?: () => number;
  /** Seeded events spread over the 72 h before start. */
  eventCount?: number;
  tokenLifetimeSeconds?: number;
  clients?: { id: string; secret: string }[];
  /** The `<vendor>` path segment of the content library paths. */
  vendor?: string;
  /** Content library logins; null = no session required. */
  users?: { username: string; password: string }[] | null;
  /** When set, a new audit event (stamped now) is added this often, in ms; off by default. */
  newEventIntervalMs?: number;
}

/**
 * One audit record as the identity service serializes it (spec 2.3). A handful of seeded records
 * use the alias spellings of the reference (`timeStamp`, `actorUUid`, `sourceIP`) instead of the
 * usual ones, so those keys are optional; `recordTimestamp` reads either spelling.
 */
export interface AuditRecordData {
  baseType: 'Audit' | 'Action';
  uuid: string;
  timestamp?: number;
  timeStamp?: number;
  organizationId: number;
  tenantId: string;
  actorId: number | null;
  actorUserName: string | null;
  actorDomain: string | null;
  actorUuid?: string | null;
  actorUUid?: string | null;
  clientId: string | null;
  deviceId: string | null;
  workspaceId: string | null;
  sourceIp?: string;
  sourceIP?: string;
  objectType: string;
  objectId: string | null;
  objectName: string | null;
  /** Only on `Audit` records: CREATE, UPDATE, DELETE, LINK or UNLINK. */
  objectAction?: string;
  values: Record<string, unknown>;
}

export interface AuditEventFilter {
  fromMillis?: number;
  toMillis?: number;
  objectType?: string;
  action?: string;
}

export interface SimulatorCounters {
  token: number;
  /** By the grant_type sent ('(none)' when absent). */
  tokenByGrant: Record<string, number>;
  audit: number;
  session: number;
  files: number;
  /** 401s answered on any route. */
  unauthorized: number;
  /** Every answer outside the control surface, by HTTP status. */
  byStatus: Record<string, number>;
}

/** `shape`: valid JSON of the wrong shape (`{"unexpected":true}`); `truncated`: JSON cut short. */
export type MalformKind = 'shape' | 'truncated';

export interface SimulatorControl {
  /** The next `count` calls to `route` (or any route) answer `status` (with a plausible body; 429/503 may carry Retry-After seconds). */
  failNext(count: number, status: number, options?: { route?: SimulatorRoute; retryAfterSeconds?: number }): void;
  /** Delay every answer of `route` (or all) by ms; 0 to clear. A very large value simulates a hung upstream. */
  setLatency(ms: number, route?: SimulatorRoute): void;
  /**
   * The next answer(s) of `route` are a 200 whose body does not match the documented shape.
   * Without `kind` the malformed answers alternate: shape, truncated, shape...
   */
  malformNext(route: SimulatorRoute, count?: number, options?: { kind?: MalformKind }): void;
  /** Every issued access token becomes invalid (401 on data endpoints); refresh tokens stay valid unless `refreshTokensToo`. */
  expireTokens(options?: { refreshTokensToo?: boolean }): void;
  /** Every content library session becomes invalid (401). */
  expireSessions(): void;
  /** Sets the lifetime (expires_in) of tokens issued from now on; 0 means already expired. */
  setTokenLifetime(seconds: number): void;
  /** Makes the next `count` refresh_token grants fail with 400 invalid_grant. */
  refuseRefresh(count?: number): void;
  /** Inserts `count` new events with timestamp now() (or given), newest first; returns them. */
  insertEvents(count: number, options?: { objectType?: string; timestamp?: number }): AuditRecordData[];
  /** Makes the record JSON string of the event with this uuid unreadable (invalid JSON) in answers. Throws for an unknown uuid. */
  corruptEvent(uuid: string): void;
  /** Ground truth for tests: the events a report query would return over the whole window (filter semantics identical to the endpoint), newest first. */
  events(filter?: AuditEventFilter): AuditRecordData[];
  /** Update session ids seeded, with a description of what each covers (for tests to pick from). */
  sessions(): { id: string; covers: string }[];
  counters(): SimulatorCounters;
  resetCounters(): void;
  /** Clears every fault switch (failNext, latency, malform, refuse) and restores token lifetime. */
  clearFaults(): void;
}

export interface Simulator {
  /** e.g. http://127.0.0.1:12345 (no trailing slash); serves both services. */
  readonly url: string;
  readonly control: SimulatorControl;
  /** Closes the server and every socket promptly, pending delayed answers included. */
  close(): Promise<void>;
}
