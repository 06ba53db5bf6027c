/** A content library session lease: a late 401 for an old session must not end the newer one. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SessionManager } from '../../src/upstream/content-library/client.js';
import { createDeadline } from '../../src/upstream/deadline.js';
import type { UpstreamHttp } from '../../src/upstream/http.js';

describe('session leases', () => {
  it('a 401 that comes back after the next login leaves the new session in use', async () => {
    let logins = 0;
    // The login answer as the HTTP layer hands it over: validated, `{ value: <session id> }`.
    const http = { request: async () => ({ value: { value: `session-${++logins}` } }) } as unknown as UpstreamHttp;
    const sessions = new SessionManager(http, 'vmware', { username: 'u', password: 'p' }, undefined);
    const deadline = createDeadline(5_000);
    const log = pino({ level: 'silent' });

    const first = await sessions.acquire(deadline, log);
    const concurrent = await sessions.acquire(deadline, log);
    expect(concurrent.headers).toEqual({ 'vmware-api-session-id': 'session-1' });
    first.invalidate();
    const renewed = await sessions.acquire(deadline, log);
    expect(renewed.headers).toEqual({ 'vmware-api-session-id': 'session-2' });

    // The concurrent call's 401 for session-1 arrives only now.
    concurrent.invalidate();
    expect((await sessions.acquire(deadline, log)).headers).toEqual({ 'vmware-api-session-id': 'session-2' });
    expect(sessions.stats()).toEqual({ logins: 2, failures: 0 });
    deadline.dispose();
  });
});
