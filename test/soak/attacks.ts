/**
 * Callers that make a gateway hold memory, at the sizes of an attack: live subscriptions carrying
 * hundreds of KB of variables they never use (SSE and WebSocket), and fat POSTs sent all at once
 * while the upstream is slow. Raw sockets, one body shared by every request, so that the attacker
 * itself stays small. Each returns how the gateway answered, and the sockets it keeps open.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { RawWebSocket } from '../helpers/websocket-frame.js';

export interface Outcome {
  /** Admitted: a 200 answer (a stream, for a subscription), or a subscription with no refusal. */
  ok: number;
  /** Refused with RATE_LIMITED: HTTP 429/503, a WebSocket `error` message, or a WebSocket closed 1013. */
  refused: number;
  /** Anything else: another status, a connection reset or closed unanswered. */
  failed: number;
}

export const LIVE_QUERY =
  'subscription Live($filter: AuditLiveFilter) { auditEventAdded(filter: $filter) { node { ... on AuditRecord { uuid } } } }';
export const filesQuery = (sessionId: string) => `{ updateSessionFiles(updateSessionId: "${sessionId}") { name } }`;

const padding = (kb: number) => 'x'.repeat(kb * 1024);

function post(port: number, body: Buffer, key: string, accept: string): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: ${accept}\r\nx-api-key: ${key}\r\n` +
      `content-length: ${body.length}\r\n\r\n`,
  );
  socket.write(body);
  return socket;
}

/** The status of the answer's first bytes; 0 when the connection closed unanswered. */
function firstStatus(socket: Socket, ms: number): Promise<number> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(0), ms);
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0));
    });
    socket.once('close', () => resolve(0));
  });
}

const tally = (outcome: Outcome, status: number) => {
  if (status === 200) outcome.ok++;
  else if (status === 429 || status === 503) outcome.refused++;
  else outcome.failed++;
};

/** `count` SSE subscriptions, `batch` at a time; the admitted ones stay open in `sockets`. */
export async function fatSseSubscriptions(port: number, key: string, count: number, kb = 240, batch = 50) {
  const body = Buffer.from(JSON.stringify({ query: LIVE_QUERY, variables: { filter: { objectType: 'Fat' }, padding: padding(kb) } }));
  const outcome: Outcome = { ok: 0, refused: 0, failed: 0 };
  const sockets: Socket[] = [];
  for (let started = 0; started < count; started += batch) {
    const opened = Array.from({ length: Math.min(batch, count - started) }, () => post(port, body, key, 'text/event-stream'));
    const statuses = await Promise.all(opened.map((socket) => firstStatus(socket, 30_000)));
    for (const [i, status] of statuses.entries()) {
      tally(outcome, status);
      // A refused client goes away; an admitted one keeps its stream.
      if (status === 200) sockets.push(opened[i]!);
      else opened[i]!.destroy();
    }
  }
  return { outcome, sockets };
}

/** `count` WebSocket subscriptions, `perConnection` on each connection; the connections stay open. */
export async function fatWsSubscriptions(port: number, key: string, count: number, kb = 240, perConnection = 50) {
  const pad = padding(kb);
  const outcome: Outcome = { ok: 0, refused: 0, failed: 0 };
  const connections: RawWebSocket[] = [];
  for (let started = 0; started < count; started += perConnection) {
    const socket = await RawWebSocket.open(port, { 'x-api-key': key }).catch(() => undefined);
    if (!socket) {
      outcome.failed += Math.min(perConnection, count - started);
      continue;
    }
    connections.push(socket);
    const ids = Array.from({ length: Math.min(perConnection, count - started) }, (_, i) => `s${started + i}`);
    for (const id of ids) socket.sendMessage({ id, type: 'subscribe', payload: { query: LIVE_QUERY, variables: { filter: { objectType: 'Fat' }, padding: pad } } });
    // Each subscription's answer, if any, comes once its message is handled: a refusal, or nothing (admitted).
    await new Promise((resolve) => setTimeout(resolve, 500));
    await socket.until(() => socket.closed || socket.socket.writableLength === 0, 30_000).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const errors = new Set(socket.messages.filter((m) => (m as { type?: string }).type === 'error').map((m) => (m as { id: string }).id));
    const rateLimited = socket.messages.filter(
      (m) => (m as { type?: string }).type === 'error' && JSON.stringify(m).includes('RATE_LIMITED'),
    ).length;
    if (socket.closeFrame?.code === 1013) {
      outcome.refused += ids.length - errors.size;
      outcome.refused += rateLimited;
      outcome.failed += errors.size - rateLimited;
    } else if (socket.closed) {
      outcome.failed += ids.length;
    } else {
      outcome.refused += rateLimited;
      outcome.failed += errors.size - rateLimited;
      outcome.ok += ids.length - errors.size;
    }
  }
  return { outcome, connections };
}

/** `count` POSTs of `query` with `kb` of unused variables, all at once, and their answers' statuses. */
export async function fatPosts(port: number, key: string, count: number, query: string, kb = 240) {
  const body = Buffer.from(JSON.stringify({ query, variables: { padding: padding(kb) } }));
  const outcome: Outcome = { ok: 0, refused: 0, failed: 0 };
  const sockets = Array.from({ length: count }, () => post(port, body, key, 'application/json'));
  for (const status of await Promise.all(sockets.map((socket) => firstStatus(socket, 60_000)))) tally(outcome, status);
  for (const socket of sockets) socket.destroy();
  return outcome;
}

/** Peak resident set size of a process, in MB (Linux: VmHWM). */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}
