/**
 * The frame follower behind the bound on WebSocket message bytes (src/server/compat/websocket-frames.ts): it must
 * see each message begin with the size its first frame announces and end with its last byte, however
 * the bytes are cut into reads.
 */
import { describe, expect, it } from 'vitest';
import { ClientFrames } from '../../src/server/compat/websocket-frames.js';
import { clientFrame, CLOSE, CONTINUATION, PING, TEXT } from '../helpers/websocket-frame.js';

type Event = ['started', number | undefined] | ['ended'];

/** Feeds the bytes in reads of the given sizes (the rest in one), and records the events with their byte offset. */
function follow(bytes: Buffer, reads: number[] = []): { events: (Event | ['at', number])[]; frames: ClientFrames } {
  const events: (Event | ['at', number])[] = [];
  const frames = new ClientFrames({
    started: (announced) => events.push(['started', announced]),
    ended: () => events.push(['ended']),
  });
  let at = 0;
  for (const size of [...reads, bytes.length]) {
    if (at >= bytes.length) break;
    frames.push(bytes.subarray(at, Math.min(bytes.length, at + size)));
    at = Math.min(bytes.length, at + size);
    events.push(['at', at]);
  }
  return { events, frames };
}

const onlyMessages = (events: (Event | ['at', number])[]) => events.filter((event) => event[0] !== 'at');

describe('ClientFrames', () => {
  it('announces a message of each length encoding with its size, and ends it with its last byte only', () => {
    for (const size of [0, 1, 125, 126, 65_535, 65_536, 300_000]) {
      const frame = clientFrame('x'.repeat(size));
      const { events, frames } = follow(frame, [frame.length - 1]);
      // An empty message's header is complete only with its last byte.
      const allButLast = size === 0 ? [['at', frame.length - 1], ['started', 0]] : [['started', size], ['at', frame.length - 1]];
      expect(events, `size ${size}`).toEqual([...allButLast, ['ended'], ['at', frame.length]]);
      expect(frames.receiving).toBe(false);
    }
  });

  it('is receiving from the first header byte of a message until its last byte, not before or after', () => {
    const frame = clientFrame('y'.repeat(1000));
    const frames = new ClientFrames({ started: () => {}, ended: () => {} });
    const seen: boolean[] = [];
    for (const byte of frame) {
      frames.push(Buffer.from([byte]));
      seen.push(frames.receiving);
    }
    // The header is 8 bytes (2, 2 of length, 4 of mask): complete at the 8th, the message ends at the last.
    expect(seen.indexOf(true)).toBe(7);
    expect(seen.lastIndexOf(true)).toBe(frame.length - 2);
    expect(seen.at(-1)).toBe(false);
  });

  it('gives a fragmented message no announced size and ends it with its final fragment; control frames between fragments start nothing', () => {
    const bytes = Buffer.concat([
      clientFrame('a'.repeat(200), { fin: false }),
      clientFrame('ping', { opcode: PING }),
      clientFrame('b'.repeat(70_000), { opcode: CONTINUATION, fin: false }),
      clientFrame('c', { opcode: CONTINUATION }),
      clientFrame(Buffer.from([0x03, 0xe8]), { opcode: CLOSE }),
    ]);
    expect(onlyMessages(follow(bytes).events)).toEqual([['started', undefined], ['ended']]);
    const beforeFinal = bytes.length - clientFrame(Buffer.from([0x03, 0xe8]), { opcode: CLOSE }).length - 1;
    const { frames } = follow(bytes.subarray(0, beforeFinal));
    expect(frames.receiving).toBe(true);
  });

  it('sees the same messages however the bytes are cut, masked or not', () => {
    const stream = Buffer.concat([
      clientFrame('{"type":"connection_init"}'),
      clientFrame('z'.repeat(130), { masked: false }),
      clientFrame('p', { opcode: PING, masked: false }),
      clientFrame('q'.repeat(70_000)),
      clientFrame('r'.repeat(3), { fin: false }),
      clientFrame('s'.repeat(3), { opcode: CONTINUATION }),
      clientFrame(''),
    ]);
    const expected = [
      ['started', 26], ['ended'],
      ['started', 130], ['ended'],
      ['started', 70_000], ['ended'],
      ['started', undefined], ['ended'],
      ['started', 0], ['ended'],
    ];
    expect(onlyMessages(follow(stream).events)).toEqual(expected);
    for (const size of [1, 2, 3, 7, 13, 64, 1000]) {
      expect(onlyMessages(follow(stream, Array(Math.ceil(stream.length / size)).fill(size)).events), `reads of ${size}`).toEqual(expected);
    }
  });

  it('ends an open fragmented message when a new one begins (the protocol error ws closes on)', () => {
    const bytes = Buffer.concat([clientFrame('a', { fin: false }), clientFrame('b', { opcode: TEXT })]);
    expect(onlyMessages(follow(bytes).events)).toEqual([['started', undefined], ['ended'], ['started', 1], ['ended']]);
  });

  it('ignores a final fragment that continues no message', () => {
    const { events, frames } = follow(clientFrame('a', { opcode: CONTINUATION }));
    expect(onlyMessages(events)).toEqual([]);
    expect(frames.receiving).toBe(false);
  });

  it('takes an announced length past 2^53 without throwing', () => {
    const header = Buffer.from([0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4]);
    const { events, frames } = follow(header);
    expect(onlyMessages(events)).toEqual([['started', 2 ** 64]]);
    expect(frames.receiving).toBe(true);
  });
});
