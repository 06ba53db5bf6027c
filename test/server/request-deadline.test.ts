/**
 * REQUEST_TIMEOUT_MS bounds an operation as a whole: upstream calls made one after another, and the
 * wait for a pooled connection, end with the operation's deadline. What resolved by then is
 * answered; what did not is UPSTREAM_UNAVAILABLE ("timed out") for its field.
 */
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

const timedOut = (path: (string | number)[]) =>
  expect.objectContaining({
    path,
    message: expect.stringMatching(/timed out/),
    extensions: expect.objectContaining({ code: 'UPSTREAM_UNAVAILABLE' }),
  });

/** The content library's file lists: `holdUpstream: fileLists`. */
const fileLists = (request: IncomingMessage) => request.url!.includes('/updatesession/file');

const filesOf = (alias: string, id: string) => `${alias}: updateSessionFiles(updateSessionId: "${id}") { name }`;

describe('the deadline of an operation', { timeout: 20_000 }, () => {
  it('answers the fields resolved by then, and the rest as timed out, when calls one after another would take longer', async () => {
    // A cold client logs in, then lists the files; the list is held past the operation's 3 s, far
    // within its own 10 s. The audit page needs neither, and has the 3 s a busy machine may take.
    gateway = await startTestGateway({ env: { REQUEST_TIMEOUT_MS: '3000' }, holdUpstream: fileLists });
    const [session] = gateway.sim.control.sessions();
    const answer = await gateway.execute(`{
      auditEvents(first: 2) { edges { cursor } }
      ${filesOf('files', session!.id)}
    }`);
    expect(answer.data?.auditEvents?.edges).toHaveLength(2);
    expect(answer.data?.files).toBeNull();
    expect(answer.errors).toEqual([timedOut(['files'])]);
    const failed = gateway.logs().filter((line) => line['msg'] === 'upstream call failed');
    expect(failed).toEqual([
      expect.objectContaining({ level: 40, route: 'update-session-files', err: expect.objectContaining({ detail: expect.objectContaining({ failure: 'deadline' }) }) }),
    ]);
  });

  it('counts the wait for a pooled connection', async () => {
    // One connection: the four lists wait for it in turn. Each takes 700 ms on the wire, within the
    // call's own 10 s; the third and fourth would end after the operation's 1.8 s.
    gateway = await startTestGateway({ env: { REQUEST_TIMEOUT_MS: '1800', UPSTREAM_MAX_CONNECTIONS: '1' } });
    const ids = gateway.sim.control.sessions().map((session) => session.id).slice(0, 4);
    // Logged in first, so that every call of the operation is a list of files.
    expect((await gateway.execute(`{ ${filesOf('warm', ids[0]!)} }`)).errors).toBeUndefined();
    gateway.sim.control.setLatency(700, 'files');
    const aliases = ['a', 'b', 'c', 'd'];
    const answer = await gateway.execute(`{ ${aliases.map((alias, i) => filesOf(alias, ids[i]!)).join('\n')} }`);
    const resolved = aliases.filter((alias) => Array.isArray(answer.data?.[alias]));
    // Which calls get the connection first is the pool's choice; two of them fit in the time.
    expect(resolved).toHaveLength(2);
    const late = aliases.filter((alias) => !resolved.includes(alias));
    expect(answer.errors).toHaveLength(2);
    expect(answer.errors).toEqual(expect.arrayContaining(late.map((alias) => timedOut([alias]))));
  });
});
