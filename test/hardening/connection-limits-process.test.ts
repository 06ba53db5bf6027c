/**
 * The connection limits as the entry point (src/main.ts, built) wires them from MAX_CONNECTIONS and
 * REQUEST_TIMEOUT_MS: a stalled body is answered 408, a connection over the cap 503, both are
 * counted on /metrics, and a flood of refusals is logged once; a WebSocket message that stalls
 * closes its connection.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { builtGateway } from '../helpers/built-gateway.js';
import { runGateway, type GatewayProcess } from '../helpers/process.js';
import { keepAliveGet, metricValue, parse, postHead, rawClients, split } from '../helpers/raw-http.js';
import { clientFrame, RawWebSocket } from '../helpers/websocket-frame.js';

const open = rawClients();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the entry point (src/main.ts) with MAX_CONNECTIONS and REQUEST_TIMEOUT_MS', () => {
  let gateway: GatewayProcess;
  let port: number;
  beforeAll(async () => {
    gateway = runGateway({ MAX_CONNECTIONS: '2', REQUEST_TIMEOUT_MS: '300', DEMO_EVENT_INTERVAL_MS: '0', LOG_LEVEL: 'info' }, await builtGateway());
    port = Number(new URL(await gateway.ready).port);
  }, 60_000);
  afterAll(() => gateway.stop('SIGKILL'));

  const get = (path: string) => `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`;
  /** /metrics once the scrape is the only connection (or after five seconds). */
  async function scrapeAlone(): Promise<string> {
    const deadline = Date.now() + 5000;
    let scrape = '';
    while (metricValue(scrape, 'gateway_http_connections') !== 1 && Date.now() < deadline) {
      await sleep(50);
      // Over a connection of its own that closes with the answer, so that it leaves nothing open.
      scrape = split(await open(port, get('/metrics')).answer()).body;
    }
    return scrape;
  }

  it('answers a stalled body 408 and a connection over the cap 503, counts both and logs the refusals once', async () => {
    const stalled = parse(await open(port, postHead(100) + '{').answer());
    expect(stalled.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(stalled.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    await scrapeAlone();

    const held = [open(port, keepAliveGet('/healthz')), open(port, keepAliveGet('/healthz'))];
    for (const client of held) expect(parse(await client.answer()).statusLine).toBe('HTTP/1.1 200 OK');
    for (let i = 0; i < 3; i++) {
      const refused = parse(await open(port, get('/healthz')).answer());
      expect(refused.statusLine).toBe('HTTP/1.1 503 Service Unavailable');
      expect(refused.body).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    }
    for (const client of held) client.socket.destroy();

    const scrape = await scrapeAlone();
    expect(metricValue(scrape, 'gateway_http_connections_refused_total{reason="limit"}')).toBe(3);
    expect(metricValue(scrape, 'gateway_http_request_timeouts_total')).toBe(1);
    // The child's log reaches this process through a pipe, on its own time.
    await vi.waitFor(() => expect(gateway.stdout()).toContain('connection limit reached'), { timeout: 5000 });
    expect(gateway.stdout().match(/connection limit reached/g)).toHaveLength(1);
  });

  it('closes a WebSocket whose message has not arrived whole within REQUEST_TIMEOUT_MS with 1008', async () => {
    const webSocket = await RawWebSocket.open(port, {});
    try {
      webSocket.send(clientFrame('{"id":"1",', { announced: 100 }));
      await webSocket.until(() => webSocket.closeFrame !== undefined);
      expect(webSocket.closeFrame).toEqual({ code: 1008, reason: 'The message did not arrive in time.' });
    } finally {
      webSocket.socket.destroy();
    }
  });
});
