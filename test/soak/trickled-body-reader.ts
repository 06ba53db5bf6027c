/**
 * Reads one upstream answer whose body comes a byte at a time, through the gateway's HTTP layer,
 * and prints what it read. Run in a process with a small heap by trickled-body.test.ts.
 * argv: <body bytes>
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { ByteReservations } from '../../src/lib/byte-reservations.js';
import { createLogger } from '../../src/lib/logger.js';
import { UpstreamHttp } from '../../src/upstream/http.js';

const size = Number(process.argv[2]);
const open = '{"note":"';
const close = '"}';
const body = Buffer.concat([Buffer.from(open), Buffer.alloc(size - open.length - close.length, 'y'), Buffer.from(close)]);

async function* byteByByte(): AsyncGenerator<Buffer> {
  for (let i = 0; i < body.length; i++) yield body.subarray(i, i + 1);
}

const dispatcher = {
  request: async () => ({ statusCode: 200, headers: {}, body: byteByByte() }),
} as unknown as Dispatcher;
const http = new UpstreamHttp({
  service: 'content-library',
  baseUrl: 'https://library.example',
  dispatcher,
  answerBytes: new ByteReservations(Number.POSITIVE_INFINITY),
  timeoutMs: 60_000,
  retry: { maxRetries: 0, baseDelayMs: 10, maxDelayMs: 10 },
});
const { value: answer } = await http.request(
  { route: 'items', method: 'GET', path: '/items', schema: z.object({ note: z.string() }) },
  { log: createLogger({ level: 'silent' }) },
);
process.stdout.write(`${answer.note.length}\n`);
