/**
 * Every example operation (GraphiQL tabs, README) runs cleanly against the simulator, within the
 * gateway's operation limits, and returns data: the one smoke test of the examples.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSessionIds } from '../../src/demo.js';
import { exampleOperations as examplesFor } from '../../src/gateway/examples/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

// Subscriptions stream over SSE/WebSocket: test/live runs those.
const exampleOperations = examplesFor(demoSessionIds).filter((op) => !/^subscription\b/m.test(op.query));
const auditExamples = exampleOperations.filter((op) => /\bauditEvents\(/.test(op.query));
const updateSessionExamples = exampleOperations.filter((op) => /\bupdateSession(Files)?\(/.test(op.query));
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

const auditNames = new Set(auditExamples.map((op) => op.name));

describe('example operations', { timeout: 10_000 }, () => {
  it('cover the audit and the update session examples, the sessions those of the demo', () => {
    expect(auditExamples.map((op) => op.name)).toEqual(['Recent logins with their methods', 'Failed logins in a window', 'Group changes by action']);
    expect(updateSessionExamples.map((op) => op.variables)).toEqual([{ id: demoSessionIds.withFiles }, { id: demoSessionIds.ready }]);
    expect(exampleOperations).toEqual([...auditExamples, ...updateSessionExamples]);
  });

  it.each(exampleOperations.map((op) => [op.name, op] as const))('%s runs without errors and returns data', async (name, op) => {
    const { data, errors } = await gw.execute(op.query, op.variables);
    expect(errors).toBeUndefined();
    expect(data).toBeTruthy();
    if (auditNames.has(name)) {
      const connections = Object.values(data) as { edges: unknown[] }[];
      expect(connections.length).toBeGreaterThan(0);
      for (const connection of connections) expect(connection.edges.length).toBeGreaterThan(0);
    }
  });

  it('reaches the third nested message of the failed file', async () => {
    const op = updateSessionExamples.find((o) => o.name === 'Update session files')!;
    const { data } = await gw.execute(op.query, op.variables);
    const failed = data.updateSessionFiles.find((f: any) => f.status === 'ERROR');
    const third = failed.errorMessage.params.find((p: any) => p.key === 'cause').value.l.params[1].value.l.params[1].value.l;
    expect(third.id).toBe('com.vmware.vdcs.net.connection_refused');
    expect(third.params.map((p: any) => p.key)).toEqual(['port', 'at']);
  });
});
