/**
 * An HTTP answer that counts the bytes Node holds for a client that does not read (written, not yet
 * handed to the network) in its request's share of the memory budget, as they are written and as
 * they drain. Its methods and listeners are shared by every answer: nothing is made per request.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { ByteHolding } from '../lib/byte-reservations.js';

export class CountedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  #holding: ByteHolding | undefined;

  /** Counts this answer's queued bytes in `holding` from now on, and gives it all back once the answer is over. */
  holdIn(holding: ByteHolding): void {
    this.#holding = holding;
    this.on('drain', recountQueued).on('finish', recountQueued).on('close', release);
  }

  recountQueuedBytes(): void {
    this.#holding?.queued(this.writableLength);
  }

  releaseHolding(): void {
    this.#holding?.release();
  }
}

function recountQueued(this: CountedResponse): void {
  this.recountQueuedBytes();
}

function release(this: CountedResponse): void {
  this.releaseHolding();
}

const { write, end } = ServerResponse.prototype;

(CountedResponse.prototype as ServerResponse).write = function countedWrite(this: CountedResponse, ...args: Parameters<typeof write>) {
  const flushed = write.apply(this, args);
  this.recountQueuedBytes();
  return flushed;
} as typeof write;

(CountedResponse.prototype as ServerResponse).end = function countedEnd(this: CountedResponse, ...args: Parameters<typeof end>) {
  const ended = end.apply(this, args);
  // The last bytes drain before 'finish'; 'close' gives the whole holding back.
  this.recountQueuedBytes();
  return ended;
} as typeof end;
