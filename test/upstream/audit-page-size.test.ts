/**
 * An audit page longer than the pageSize asked (src/upstream/identity/client.ts): no part of the
 * page is read, the call fails with UPSTREAM_INVALID_RESPONSE and the log says how many rows came.
 * Through the whole gateway, beside a deferred sibling: test/hardening/hostile-upstream.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/lib/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { createUpstreams, type GatewayUpstreams } from '../../src/upstream/index.js';
import { MemoryLog } from '../helpers/memory-log.js';
import { scriptedAuditPage, scriptedAuditRow, scriptedEnv, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

let upstream: ScriptedUpstream;
const opened: GatewayUpstreams[] = [];
beforeAll(async () => {
  upstream = await startScriptedUpstream();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((upstreams) => upstreams.close()));
  upstream.clear();
});
afterAll(() => upstream.close());

function identity() {
  const config = loadConfig({
    ...scriptedEnv(upstream),
    IDENTITY_CLIENT_ID: 'gateway',
    IDENTITY_CLIENT_SECRET: 'secret',
    GATEWAY_ALLOW_ANONYMOUS: 'true',
    AUDIT_CACHE_MAX_BYTES: '0',
    UPSTREAM_TIMEOUT_MS: '5000',
  });
  const upstreams = createUpstreams(config, { retry: { maxRetries: 0 } });
  opened.push(upstreams);
  const memory = new MemoryLog();
  return { identity: upstreams.identity!, memory, log: createLogger({ level: 'info', destination: memory }) };
}

const query = (pageSize: number) => ({ fromMillis: 0, toMillis: 1_800_000_000_000, pageSize, startIndex: 0 });

describe('an audit page longer than the pageSize asked', { timeout: 10_000 }, () => {
  it('fails its call with UPSTREAM_INVALID_RESPONSE, the log naming how many rows came', async () => {
    const { identity: client, memory, log } = identity();
    upstream.answerNext('audit', { body: scriptedAuditPage([0, 1, 2].map((i) => scriptedAuditRow(i))) });
    await expect(client.auditReport(query(2), { log })).rejects.toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', service: 'identity' });
    const failure = memory.lines().find((line) => line.msg === 'upstream call failed');
    expect(JSON.stringify(failure)).toContain('3 rows where pageSize 2 was asked');
  });

  it('is read when it holds exactly the pageSize asked', async () => {
    const { identity: client, log } = identity();
    upstream.answerNext('audit', { body: scriptedAuditPage([0, 1].map((i) => scriptedAuditRow(i))) });
    const page = await client.auditReport(query(2), { log });
    expect(page.rows.map((row) => row.ok)).toEqual([true, true]);
  });
});
