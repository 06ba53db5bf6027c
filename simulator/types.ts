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

/**
 * What a hostile upstream sends. Audit only: `huge-record` (a record JSON string of 2 MB),
 * `deep-record` (`values` nesting arrays 5000 deep). Any route: `oversize-body` (a valid JSON body of
 * `bytes`, streamed without a length), `endless-body` (headers, then a byte every 50 ms, never the
 * end), `reset-mid-body` (half the promised body, then the connection is destroyed),
 * `drop-connection` (the connection is destroyed before any answer).
 */
export type HostileKind = 'huge-record' | 'deep-record' | 'oversize-body' | 'endless-body' | 'reset-mid-body' | 'drop-connection';

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
  /** The next `count` answers of `route` are hostile (see HostileKind); `bytes` sizes `oversize-body`. */
  hostileNext(route: SimulatorRoute, kind: HostileKind, options?: { count?: number; bytes?: number }): void;
  /**
   * The next `count` audit answers of more than one row come back empty, although one-row reads
   * still find rows there: an upstream that disagrees with itself between calls.
   */
  inconsistentPages(count?: number): void;
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
  /** Clears every fault switch (failNext, latency, malform, refuse, hostile, inconsistent) and restores token lifetime. */
  clearFaults(): void;
}

/** One request as the simulator received it (see wire-log.ts); secrets are fingerprinted, never kept. */
export interface WireRequest {
  /** undefined: a path the simulator does not serve. */
  readonly route: SimulatorRoute | undefined;
  readonly method: string;
  readonly path: string;
  /** The query string's parameters (the first of a repeated name), secret ones fingerprinted. */
  readonly query: Readonly<Record<string, string>>;
  /** The body's fields when it is a form, secret ones fingerprinted; undefined for other bodies. */
  readonly form: Readonly<Record<string, string>> | undefined;
  readonly bodyBytes: number;
  /** Lower-case names; credentials as `<scheme> <fingerprint>` or `<fingerprint>`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The status answered; undefined while pending, or when the exchange ended without an answer. */
  readonly status: number | undefined;
}

export interface SimulatorWire {
  /** Every request received outside `/__simulator/` (oldest first, the latest 2000), or those of one route. */
  requests(route?: SimulatorRoute): WireRequest[];
  /** What a secret value is recorded as: comparable within one simulator, never the value. */
  fingerprint(secret: string): string;
  clear(): void;
}

export interface Simulator {
  /** e.g. http://127.0.0.1:12345 (no trailing slash); serves both services. */
  readonly url: string;
  readonly control: SimulatorControl;
  /** What the simulator received, request by request, secrets fingerprinted. */
  readonly wire: SimulatorWire;
  /** Closes the server and every socket promptly, pending delayed answers included. */
  close(): Promise<void>;
}
