/**
 * The heap that live reads (every poller's and catch-up's) may hold at once, shared by all of them:
 * a read reserves a record's estimated heap before it keeps the record, and gives it back when it
 * hands its records over; and only a few upstream pages are read and parsed at once. Upstream
 * pages are bounded one by one; this bounds what many reads of many pages hold together (a hostile
 * upstream answering endless pages of large records would otherwise exhaust the heap).
 */
import { ByteReservations } from '../../lib/byte-reservations.js';
import type { AuditRecord } from '../../upstream/identity/schemas.js';
import { Turns, type GiveBack } from '../../lib/turns.js';

/** 16 MiB of estimates: about 9,500 records of the simulator (1.7 KB each by estimate, 0.7 KB measured) at once. */
export const DEFAULT_LIVE_READ_BYTES = 16 * 1024 * 1024;
/**
 * Upstream pages all live reads have in flight at once: a full page of 1 KB records is about 6 MB
 * of body and 8 MB parsed, and 100 pollers may read at once. Most pages are short and quick.
 */
export const LIVE_PAGES_IN_FLIGHT = 4;

const NEVER = new AbortController().signal;

export class ReadBudget {
  readonly limit: number;
  readonly #bytes: ByteReservations;
  readonly #pages: Turns;

  constructor(limit: number, pagesInFlight = LIVE_PAGES_IN_FLIGHT) {
    this.limit = limit;
    this.#bytes = new ByteReservations(limit);
    this.#pages = new Turns(pagesInFlight);
  }

  /** One of the pages in flight, from its request until its records are kept; undefined once `signal` aborts. */
  pageTurn(signal: AbortSignal = NEVER): Promise<GiveBack | undefined> {
    return this.#pages.take(signal);
  }

  /** Bytes reserved now, by every read together. */
  get held(): number {
    return this.#bytes.bytes;
  }

  /** Reserves `bytes` if they fit in what is left; false (nothing reserved) if they do not. */
  tryReserve(bytes: number): boolean {
    return this.#bytes.tryTake(bytes);
  }

  release(bytes: number): void {
    this.#bytes.giveBack(bytes);
  }
}

/*
 * Heap of a parsed record, by measurement (Node 20, x64, heapUsed after a collection, records
 * parsed as the identity client parses them): a property 25-33 bytes in an object of up to 127 of
 * them, 65-86 in a larger one (a dictionary); each distinct key about 100 more the first time it
 * is seen (its string and the object shapes made for it: 155 bytes a property when every key is
 * new); an empty object as a member about 76 bytes, an empty array as an element 32, a short
 * string 24 plus its characters (two bytes each in a string that holds one past Latin-1). Records
 * of the simulator take 691 bytes (estimate 1.7 KB), one with a 1000-character value 1530 (2.7 KB),
 * one with 120 new keys 16.5 KB (26.7 KB), one with 900 empty objects 97 KB (146 KB), one with a
 * 1 MB string 998 KB (1002 KB).
 */
const OBJECT_BYTES = 96;
const ARRAY_BYTES = 48;
const PROPERTY_BYTES = 32;
const DICTIONARY_PROPERTY_BYTES = 64;
const DICTIONARY_ABOVE = 127;
const NEW_KEY_BYTES = 128;
const ELEMENT_BYTES = 8;
const STRING_BYTES = 24;
const NUMBER_BYTES = 16;
/** The LiveRecord around the record, its digest and uuid, and its entry in a read's map. */
const LIVE_RECORD_BYTES = 256;
const TWO_BYTE_CHARACTER = /[^\u0000-\u00ff]/;

const stringHeapBytes = (text: string): number => STRING_BYTES + text.length * (TWO_BYTE_CHARACTER.test(text) ? 2 : 1);

/** What keeping records costs, at most, by the measurements above; one per read (keys seen before cost less). */
export class HeapEstimate {
  readonly #keys = new Set<string>();

  recordBytes(record: AuditRecord): number {
    return LIVE_RECORD_BYTES + this.valueBytes(record);
  }

  /**
   * The heap of a value parsed from JSON. Walked without recursion: a caller's variables may be
   * nested as deep as JSON.parse allows.
   */
  valueBytes(root: unknown): number {
    let bytes = 0;
    const waiting: unknown[] = [root];
    while (waiting.length > 0) {
      const value = waiting.pop();
      if (typeof value === 'string') bytes += stringHeapBytes(value);
      else if (typeof value === 'number') bytes += NUMBER_BYTES;
      else if (typeof value !== 'object' || value === null) continue;
      else if (Array.isArray(value)) {
        bytes += ARRAY_BYTES + ELEMENT_BYTES * value.length;
        for (const item of value) waiting.push(item);
      } else {
        const entries = Object.entries(value);
        const propertyBytes = entries.length > DICTIONARY_ABOVE ? DICTIONARY_PROPERTY_BYTES : PROPERTY_BYTES;
        bytes += OBJECT_BYTES + propertyBytes * entries.length;
        for (const [key, item] of entries) {
          waiting.push(item);
          if (this.#keys.has(key)) continue;
          this.#keys.add(key);
          bytes += NEW_KEY_BYTES + stringHeapBytes(key);
        }
      }
    }
    return bytes;
  }
}
