/** Raw HTTP/1.1 over a socket: what clients that stall, trickle or never close see of the server. */
import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import { API_KEY } from '../live/live-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw connection that records what it receives and whether the server has closed it. */
export class RawClient {
  readonly socket: Socket;
  received = '';
  /** The server has closed its side: nothing more will arrive. */
  ended = false;
  closed = false;
  constructor(port: number, bytes = '') {
    // Half-open allowed: the client never closes by itself, so only the server can end the connection.
    this.socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => (this.received += chunk));
    this.socket.on('error', () => {});
    this.socket.once('end', () => (this.ended = true));
    this.socket.once('close', () => (this.closed = true));
    if (bytes) this.socket.write(bytes);
  }

  /** Resolves once the answer is complete or the server has closed the connection, or after `ms` (tests then fail on what they see). */
  async answer(ms = 5000): Promise<string> {
    const deadline = Date.now() + ms;
    while (!this.ended && !this.closed && !this.complete() && Date.now() < deadline) await sleep(10);
    return this.received;
  }

  private complete(): boolean {
    const end = this.received.indexOf('\r\n\r\n');
    if (end < 0) return false;
    const head = this.received.slice(0, end);
    const body = this.received.slice(end + 4);
    if (/transfer-encoding: chunked/i.test(head)) return body.endsWith('0\r\n\r\n');
    const length = /content-length: (\d+)/i.exec(head)?.[1];
    return length !== undefined && Buffer.byteLength(body) >= Number(length);
  }
}

/** A chunked body's chunks, joined. */
function unchunk(body: string): string {
  let text = '';
  for (let rest = body; ; ) {
    const lineEnd = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (!(size > 0)) return text;
    text += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

/** An HTTP/1.1 answer's head and body text. */
export function split(answer: string): { head: string; body: string } {
  const end = answer.indexOf('\r\n\r\n');
  const head = end < 0 ? answer : answer.slice(0, end);
  const raw = end < 0 ? '' : answer.slice(end + 4);
  return { head, body: /transfer-encoding: chunked/i.test(head) ? unchunk(raw) : raw };
}

export function parse(answer: string) {
  const { head, body } = split(answer);
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => line.split(/:\s*/, 2).map((s) => s.toLowerCase())));
  return { statusLine, headers, body: body ? (JSON.parse(body) as unknown) : undefined };
}

export const keepAliveGet = (path: string) => `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`;
export const postHead = (length: number) =>
  `POST /graphql HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json\r\nx-api-key: ${API_KEY}\r\ncontent-length: ${length}\r\n\r\n`;
export const query = JSON.stringify({ query: '{ __typename }' });

/** Opens raw clients for the tests of a file, and destroys them after each test. */
export function rawClients(): (port: number, bytes?: string) => RawClient {
  const clients: RawClient[] = [];
  afterEach(() => {
    for (const client of clients.splice(0)) client.socket.destroy();
  });
  return (port, bytes = '') => {
    const client = new RawClient(port, bytes);
    clients.push(client);
    return client;
  };
}

/** The value of one sample line of a Prometheus scrape (NaN: not there). */
export const metricValue = (scrape: string, line: string) => Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(scrape)?.[1]);
