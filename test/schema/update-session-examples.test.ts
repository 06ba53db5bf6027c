/** The update-session example operations (GraphiQL tabs, README) run cleanly against the simulator. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSessionIds } from '../../src/demo.js';
import { updateSessionExamples as examplesFor } from '../../src/examples/update-sessions.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const updateSessionExamples = examplesFor(demoSessionIds);
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

describe('update-session examples', { timeout: 10_000 }, () => {
  it.each(updateSessionExamples.map((op) => [op.name, op] as const))('%s runs without errors', async (_name, op) => {
    const { data, errors } = await gw.execute(op.query, op.variables);
    expect(errors).toBeUndefined();
    expect(data).toBeTruthy();
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
