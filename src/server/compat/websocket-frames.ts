/** A client's frame headers: when a message begins, its size, when it is whole (ws 8.23 tells only when it is whole). */

interface MessageEvents {
  /** Its size as its first frame announces it, or undefined when fragmented. */
  started(announced: number | undefined): void;
  ended(): void;
}

/** RFC 6455 §5.2: opcodes 0x8 and above are control frames, which may come between fragments. */
const FIRST_CONTROL_OPCODE = 0x8;
const CONTINUATION = 0x0;

/** The header's length once its first two bytes are in: two, up to eight of extended length, four of mask. */
function headerLength(second: number): number {
  const length7 = second & 0x7f;
  const extended = length7 === 126 ? 2 : length7 === 127 ? 8 : 0;
  return 2 + extended + (second & 0x80 ? 4 : 0);
}

function payloadLength(header: Buffer): number {
  const length7 = header[1]! & 0x7f;
  if (length7 === 126) return header.readUInt16BE(2);
  // Past 2^53 the figure is inexact, and far past any maxPayload.
  if (length7 === 127) return Number(header.readBigUInt64BE(2));
  return length7;
}

export class ClientFrames {
  private readonly header = Buffer.alloc(14);
  private headerBytes = 0;
  private payloadLeft = 0;
  private frameEndsMessage = false;
  /** A message has begun and its last byte is not in yet. */
  receiving = false;

  constructor(private readonly events: MessageEvents) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.payloadLeft > 0) {
        const taken = Math.min(this.payloadLeft, chunk.length - at);
        this.payloadLeft -= taken;
        at += taken;
        if (this.payloadLeft === 0) this.frameDone();
        continue;
      }
      this.header[this.headerBytes++] = chunk[at++]!;
      // A header is at least two bytes long, so its first byte alone never completes one.
      if (this.headerBytes === headerLength(this.header[1]!)) this.frameBegins();
    }
  }

  private frameBegins(): void {
    const fin = (this.header[0]! & 0x80) !== 0;
    const opcode = this.header[0]! & 0x0f;
    this.headerBytes = 0;
    this.payloadLeft = payloadLength(this.header);
    const isData = opcode < FIRST_CONTROL_OPCODE;
    if (isData && opcode !== CONTINUATION) {
      // A new message while one is open breaks the protocol (ws closes the connection): the old one is over.
      if (this.receiving) this.events.ended();
      this.receiving = true;
      this.events.started(fin ? this.payloadLeft : undefined);
    }
    this.frameEndsMessage = isData && fin;
    if (this.payloadLeft === 0) this.frameDone();
  }

  private frameDone(): void {
    if (!this.frameEndsMessage || !this.receiving) return;
    this.receiving = false;
    this.events.ended();
  }
}
