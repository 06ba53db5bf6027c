/**
 * An HTTP answer that counts the bytes Node holds for a client that does not read in its request's share of the
 * memory budget, as they are written and as they drain. Its methods and listeners are shared by every answer.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { ByteHolding } from '../lib/byte-reservations.js';

export class CountedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  #holding: ByteHolding | undefined;

  /** Counts this answer's queued bytes in `holding` from now on, and gives it all back once the answer is over. */
  holdIn(holding: ByteHolding): void {
    this.#holding = holding;
    // The last bytes drain before 'finish'; 'close' gives the whole holding back.
    this.on('drain', this.recountQueuedBytes).on('finish', this.recountQueuedBytes).on('close', this.releaseHolding);
  }

  recountQueuedBytes(): void {
    this.#holding?.queued(this.writableLength);
  }

  releaseHolding(): void {
    this.#holding?.release();
  }
}

for (const name of ['write', 'end'] as const) {
  const original = ServerResponse.prototype[name] as (...args: unknown[]) => unknown;
  Reflect.set(CountedResponse.prototype, name, function counted(this: CountedResponse, ...args: unknown[]) {
    const result = original.apply(this, args);
    this.recountQueuedBytes();
    return result;
  });
}
