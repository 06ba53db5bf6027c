/** A parsed JSON value's heap, from above by V8's layout: large objects are dictionaries, new keys cost, wide strings double. */
const OBJECT_BYTES = 96;
const ARRAY_BYTES = 48;
const PROPERTY_BYTES = 32;
const DICTIONARY_PROPERTY_BYTES = 64;
const DICTIONARY_ABOVE = 127;
const NEW_KEY_BYTES = 128;
const ELEMENT_BYTES = 8;
const STRING_BYTES = 24;
const NUMBER_BYTES = 16;
const TWO_BYTE_CHARACTER = /[^\u0000-\u00ff]/;

const stringHeapBytes = (text: string): number => STRING_BYTES + text.length * (TWO_BYTE_CHARACTER.test(text) ? 2 : 1);

/** One per read: keys it has seen before cost less. */
export class HeapEstimate {
  readonly #keys = new Set<string>();

  /** Walked without recursion: a caller's variables may be nested as deep as JSON.parse allows. */
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
