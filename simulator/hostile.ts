/**
 * Hostile answers: what a broken or malicious upstream could send, to prove the gateway survives
 * it. Record-level kinds rewrite the first row of a normal audit page; body-level kinds apply to
 * any route and write the response themselves (streamed, cut off, or never finished).
 */
import type { ServerResponse } from 'node:http';
import type { HostileKind, SimulatorRoute } from './types.js';
import { JSON_TYPE, type Answer } from './http-util.js';

export interface PlannedHostility {
  readonly kind: HostileKind;
  /** oversize-body: the body's length in bytes. */
  readonly bytes: number;
}

export const RECORD_KINDS: ReadonlySet<HostileKind> = new Set(['huge-record', 'deep-record']);

/** Default of oversize-body: past the gateway's default 16 MB body cap. */
export const DEFAULT_OVERSIZE_BYTES = 17 * 1024 * 1024;
const HUGE_RECORD_BYTES = 2 * 1024 * 1024;
const DEEP_RECORD_LEVELS = 5000;
const ENDLESS_BODY_INTERVAL_MS = 50;

/** A normal audit page whose first record is replaced by a huge or deeply nested, otherwise valid, one. */
export function hostileAuditPage(answer: Answer, kind: HostileKind): Answer {
  if (answer.status !== 200) return answer;
  const page = JSON.parse(answer.body) as { data: unknown[][] };
  const row = page.data[0];
  if (!row) return answer;
  const record = JSON.parse(String(row[row.length - 1])) as Record<string, unknown>;
  const placeholder = '"__hostile__"';
  record['values'] = { payload: '__hostile__' };
  const payload =
    kind === 'huge-record'
      ? JSON.stringify('x'.repeat(HUGE_RECORD_BYTES))
      : '['.repeat(DEEP_RECORD_LEVELS) + ']'.repeat(DEEP_RECORD_LEVELS);
  row[row.length - 1] = JSON.stringify(record).replace(placeholder, payload);
  return { ...answer, body: JSON.stringify(page) };
}

/** Writes a body-level hostile answer; returns the status it started with (0: none, for the counters). */
export function writeHostileBody(res: ServerResponse, route: SimulatorRoute, plan: PlannedHostility): number {
  switch (plan.kind) {
    case 'oversize-body': {
      // Valid JSON of the route's outer shape, streamed without a length: only counting bytes finds out.
      res.writeHead(200, { 'content-type': JSON_TYPE });
      const head = route === 'audit' ? '{"header":[],"data":[],"padding":"' : '{"value":[],"padding":"';
      res.write(head);
      const chunk = 'x'.repeat(64 * 1024);
      let left = Math.max(0, plan.bytes - head.length - 2);
      const pump = () => {
        while (left > 0) {
          const piece = left >= chunk.length ? chunk : chunk.slice(0, left);
          left -= piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end('"}');
      };
      res.once('close', () => {
        left = 0;
      });
      pump();
      return 200;
    }
    case 'endless-body': {
      // Headers at once, then a byte now and then, never the end.
      res.writeHead(200, { 'content-type': JSON_TYPE });
      res.write('{"data":[');
      const timer = setInterval(() => res.write(' '), ENDLESS_BODY_INTERVAL_MS);
      res.once('close', () => clearInterval(timer));
      return 200;
    }
    case 'reset-mid-body': {
      // Promises a body, sends half of it, then drops the connection.
      const body = route === 'audit' ? '{"header":[],"data":[["1700000000000",null,null,null,"{}"]]}' : '{"value":[]}';
      res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
      res.write(body.slice(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
      return 200;
    }
    case 'drop-connection':
      res.socket?.destroy();
      return 0;
    default:
      throw new RangeError(`${plan.kind} is not a body-level hostile answer`);
  }
}
