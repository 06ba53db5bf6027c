/**
 * An identity service that answers every audit read with one more record stamped outside the
 * window asked for (ten years ahead), over real HTTP: the gateway leaves it out, its poller keeps
 * reading, and the records inserted later reach an SSE client, each once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeServer } from '../helpers/listen.js';
import { registered, sleep, startLiveServer, subscribeSse, type LiveServer } from './live-server.js';

const TEN_YEARS_MS = 10 * 365 * 86_400_000;

let server: LiveServer | undefined;
let proxy: Server | undefined;
afterEach(async () => {
  if (proxy) await closeServer(proxy);
  await server?.close();
  server = undefined;
  proxy = undefined;
});

/** Forwards to `target`; audit answers get a copy of their first record, stamped ten years ahead, on top. */
async function addingFutureRecords(target: () => string): Promise<string> {
  proxy = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>;
      const method = request.method ?? 'GET';
      const upstream = await fetch(`${target()}${request.url}`, { method, headers, ...(method === 'GET' ? {} : { body: Buffer.concat(chunks) }) });
      let body = await upstream.text();
      if (request.url?.startsWith('/analytics/reports/audit/') && upstream.ok) {
        const page = JSON.parse(body) as { data: unknown[][] };
        const first = page.data[0];
        if (first) {
          const record = JSON.parse(String(first[4])) as Record<string, unknown>;
          const timestamp = Date.now() + TEN_YEARS_MS;
          page.data.unshift([String(timestamp), first[1], first[2], first[3], JSON.stringify({ ...record, uuid: 'from-the-future', timestamp })]);
          body = JSON.stringify(page);
        }
      }
      response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

describe('a record stamped outside the window read, over SSE', () => {
  it('is not delivered, and the records inserted later all arrive, each once', async () => {
    let simulatorUrl = '';
    const proxyUrl = await addingFutureRecords(() => simulatorUrl);
    server = await startLiveServer({ env: { IDENTITY_BASE_URL: proxyUrl } });
    const live = server;
    simulatorUrl = live.sim.url;
    live.sim.control.insertEvents(1, { objectType: 'Skewed', timestamp: Date.now() - 60_000 });
    const sub = await registered(live, () => subscribeSse(live.url, { filter: { objectType: 'Skewed' } }));
    const inserted: string[] = [];
    for (let i = 0; i < 10; i++) {
      await sleep(100);
      inserted.push(...live.sim.control.insertEvents(2, { objectType: 'Skewed' }).map((r) => r.uuid));
    }
    await sub.received.until((r) => r.uuids.length >= inserted.length);
    await sleep(300);
    expect(sub.received.errors).toEqual([]);
    expect(sub.received.uuids.sort()).toEqual([...inserted].sort());
    expect(live.logs().some((line) => line.msg === 'live audit rows skipped: stamped outside the window read' && line.later === 1)).toBe(true);
    await sub.stop();
  }, 20_000);
});
