/** The SimulatorControl object: what tests (and the HTTP control surface) use to steer the simulator. */
import type { AuditRecordData, SimulatorControl } from './types.js';
import type { SimulatorState } from './state.js';
import { withDefaults } from './audit-route.js';
import { UPDATE_SESSIONS } from './content-library-data.js';

/** Bounds one insert, so a typo cannot exhaust memory. */
const MAX_INSERT = 1_000_000;

export function createControl(state: SimulatorState): SimulatorControl {
  return {
    failNext(count, status, options = {}) {
      state.faults.failNext(count, status, options.route, options.retryAfterSeconds);
    },
    setLatency(ms, route) {
      state.faults.setLatency(ms, route);
    },
    malformNext(route, count = 1, options = {}) {
      state.faults.malformNext(route, count, options.kind);
    },
    expireTokens(options = {}) {
      state.tokens.expireAccessTokens();
      if (options.refreshTokensToo) state.tokens.expireRefreshTokens();
    },
    expireSessions() {
      state.loginSessions.expireAll();
    },
    setTokenLifetime(seconds) {
      if (!Number.isInteger(seconds) || seconds < 0) throw new RangeError('seconds must be a non-negative integer');
      state.tokenLifetimeSeconds = seconds;
    },
    refuseRefresh(count = 1) {
      state.faults.refuseRefresh(count);
    },
    hostileNext(route, kind, options = {}) {
      state.faults.hostileNext(route, kind, options.count ?? 1, options.bytes);
    },
    inconsistentPages(count = 1) {
      state.faults.inconsistentPages(count);
    },
    insertEvents(count, options = {}) {
      if (!Number.isInteger(count) || count < 0 || count > MAX_INSERT) {
        throw new RangeError(`count must be an integer between 0 and ${MAX_INSERT}`);
      }
      const timestamp = options.timestamp ?? state.now();
      if (!Number.isSafeInteger(timestamp)) throw new RangeError('timestamp must be an integer (epoch ms)');
      if (options.objectType !== undefined && options.objectType === '') throw new RangeError('objectType must not be empty');
      // Draw again on the (unlikely) uuid collision: uuids must stay unique.
      const fresh = new Set<string>();
      const records: AuditRecordData[] = [];
      while (records.length < count) {
        const record = state.insertedEvents.create(timestamp, options.objectType);
        if (state.audit.has(record.uuid) || fresh.has(record.uuid)) continue;
        fresh.add(record.uuid);
        records.push(record);
      }
      return state.audit.insert(records);
    },
    corruptEvent(uuid) {
      if (!state.audit.corrupt(uuid)) throw new RangeError(`no audit event with uuid ${uuid}`);
    },
    events(filter = {}) {
      return state.audit.records(withDefaults(filter, state.now()));
    },
    sessions() {
      return UPDATE_SESSIONS.map(({ id, covers }) => ({ id, covers }));
    },
    counters() {
      return state.counters.snapshot();
    },
    resetCounters() {
      state.counters.reset();
    },
    clearFaults() {
      state.faults.clear();
      state.tokenLifetimeSeconds = state.defaultTokenLifetimeSeconds;
    },
  };
}
