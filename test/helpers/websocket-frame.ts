/** WebSocket frames as a client sends them (RFC 6455 §5.2), and a client on a raw socket. */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export const TEXT = 0x1;
export const CONTINUATION = 0x0;
export const CLOSE = 0x8;
export const PING = 0x9;

export interface FrameOptions {
  readonly opcode?: number;
  readonly fin?: boolean;
  /** Clients must mask; a test of the server's framing may not. */
  readonly masked?: boolean;
  /** The payload length the header announces, when more than what is sent. */
  readonly announced?: number;
}

/** A frame's header and (masked) payload. */
export function clientFrame(payload: Uint8Array | string, options: FrameOptions = {}): Buffer {
  const { opcode = TEXT, fin = true, masked = true } = options;
  const body = Buffer.from(payload);
  const length = options.announced ?? body.length;
  const first = (fin ? 0x80 : 0) | opcode;
  const maskBit = masked ? 0x80 : 0;
  let header: Buffer;
  if (length < 126) header = Buffer.from([first, maskBit | length]);
  else if (length < 0x10000) {
    header = Buffer.from([first, maskBit | 126, 0, 0]);
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = maskBit | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!masked) return Buffer.concat([header, body]);
  const mask = randomBytes(4);
  for (let i = 0; i < body.length; i += 1) body[i]! ^= mask[i % 4]!;
  return Buffer.concat([header, mask, body]);
}

/**
 * A WebSocket client on a raw socket (graphql-transport-ws), so that a test can send a message in
 * pieces or leave it unfinished. It records the server's text messages and its close frame.
 */
export class RawWebSocket {
  readonly socket: Socket;
  readonly messages: unknown[] = [];
  closeFrame: { code: number; reason: string } | undefined;
  closed = false;
  private pending = Buffer.alloc(0);
  private upgraded = false;

  constructor(port: number) {
    this.socket = connect({ port, host: '127.0.0.1' });
    this.socket.on('error', () => {});
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.once('close', () => (this.closed = true));
    this.socket.write(
      'GET /graphql HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n' +
        `sec-websocket-key: ${randomBytes(16).toString('base64')}\r\nsec-websocket-version: 13\r\n` +
        'sec-websocket-protocol: graphql-transport-ws\r\n\r\n',
    );
  }

  /** Upgraded and acknowledged (`connection_ack`) for these connection params. */
  static async open(port: number, connectionParams: Record<string, string>): Promise<RawWebSocket> {
    const client = new RawWebSocket(port);
    client.sendMessage({ type: 'connection_init', payload: connectionParams });
    await client.until(() => client.messages.some((m) => (m as { type?: string }).type === 'connection_ack'));
    return client;
  }

  send(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  sendMessage(message: unknown): void {
    this.send(clientFrame(JSON.stringify(message)));
  }

  async until(condition: () => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`not within ${ms} ms; received ${JSON.stringify(this.messages)}, closed ${this.closed}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private read(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    if (!this.upgraded) {
      const end = this.pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!this.pending.subarray(0, end).toString().startsWith('HTTP/1.1 101')) throw new Error(this.pending.toString());
      this.upgraded = true;
      this.pending = this.pending.subarray(end + 4);
    }
    // Server frames are unmasked, and these are short: no 64-bit lengths.
    while (this.pending.length >= 2) {
      const length7 = this.pending[1]! & 0x7f;
      const headerLength = length7 === 126 ? 4 : 2;
      const length = length7 === 126 ? this.pending.readUInt16BE(2) : length7;
      if (this.pending.length < headerLength + length) return;
      const payload = this.pending.subarray(headerLength, headerLength + length);
      const opcode = this.pending[0]! & 0x0f;
      if (opcode === TEXT) this.messages.push(JSON.parse(payload.toString()));
      if (opcode === CLOSE) this.closeFrame = { code: payload.readUInt16BE(0), reason: payload.subarray(2).toString() };
      this.pending = this.pending.subarray(headerLength + length);
    }
  }
}
