/** Seeded pseudo-random helpers: the simulator never uses Math.random, so a seed fixes the data. */

/** A generator of floats in [0, 1). */
export type Random = () => number;

/** mulberry32: tiny, fast, and good enough for test data. */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer in [min, max], both inclusive. */
export function intBetween(rand: Random, min: number, max: number): number {
  return min + Math.floor(rand() * (max - min + 1));
}

export function chance(rand: Random, probability: number): boolean {
  return rand() < probability;
}

export function pick<T>(rand: Random, items: readonly T[]): T {
  if (items.length === 0) throw new RangeError('pick from an empty list');
  return items[Math.floor(rand() * items.length)] as T;
}

/** Picks a value with probability proportional to its weight. */
export function weightedPick<T>(rand: Random, entries: readonly (readonly [T, number])[]): T {
  const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = rand() * total;
  for (const [value, weight] of entries) {
    roll -= weight;
    if (roll < 0) return value;
  }
  const last = entries[entries.length - 1];
  if (!last) throw new RangeError('weightedPick from an empty list');
  return last[0];
}

/** Byte -> two hex digits; formatting via toString(16) per word dominated generation time. */
const BYTE_HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function word(rand: Random): number {
  return (rand() * 4294967296) >>> 0;
}

function wordHex(w: number): string {
  return (
    (BYTE_HEX[w >>> 24] as string) +
    (BYTE_HEX[(w >>> 16) & 255] as string) +
    (BYTE_HEX[(w >>> 8) & 255] as string) +
    (BYTE_HEX[w & 255] as string)
  );
}

export function hexString(rand: Random, length: number): string {
  let out = '';
  while (out.length < length) out += wordHex(word(rand));
  return out.slice(0, length);
}

/** A version-4-shaped UUID drawn from the seeded generator. */
export function seededUuid(rand: Random): string {
  const a = wordHex(word(rand));
  const b = wordHex(((word(rand) & 0xffff0fff) | 0x00004000) >>> 0); // version 4
  const c = wordHex(((word(rand) & 0x3fffffff) | 0x80000000) >>> 0); // variant 10xx
  const d = wordHex(word(rand));
  return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${d}`;
}
