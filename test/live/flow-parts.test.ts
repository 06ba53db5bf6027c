/** The small parts of the live flow: catch-up turns, and how far behind a client counts as. */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { PendingRecords } from '../../src/audit/live/records.js';
import { toLiveRecord, type LiveRecord } from '../../src/audit/live/records.js';
import { Turns } from '../../src/lib/turns.js';
import type { AuditRecord } from '../../src/upstream/identity/schemas.js';

describe('Turns', () => {
  it('serve waiters in order; a waiter that aborts leaves the line, and a turn given back twice counts once', async () => {
    const turns = new Turns(1);
    const first = await turns.take(new AbortController().signal);
    const leaving = new AbortController();
    const served: string[] = [];
    const gone = turns.take(leaving.signal).then((giveBack) => served.push(giveBack ? 'gone' : 'left'));
    const second = turns.take(new AbortController().signal).then((giveBack) => (served.push('second'), giveBack));
    leaving.abort();
    await gone;
    first!();
    first!();
    const giveBack = await second;
    expect(served).toEqual(['left', 'second']);
    // One turn, held by `second`: a newcomer waits until it is given back.
    let third = false;
    const waiting = turns.take(new AbortController().signal).then(() => (third = true));
    await Promise.resolve();
    expect(third).toBe(false);
    giveBack!();
    await waiting;
    expect(third).toBe(true);
  });
  it('give no turn to a caller already gone, and keep the turn for the next one', async () => {
    const turns = new Turns(1);
    const gone = new AbortController();
    gone.abort();
    expect(await turns.take(gone.signal)).toBeUndefined();
    expect(await turns.take(new AbortController().signal)).toBeTypeOf('function');
  });

  it('leave nothing on the caller\'s signal once a waiter is served or has left', async () => {
    const turns = new Turns(1);
    const first = await turns.take(new AbortController().signal);
    const served = new AbortController();
    const leaving = new AbortController();
    const servedTurn = turns.take(served.signal);
    const left = turns.take(leaving.signal);
    expect(getEventListeners(served.signal, 'abort')).toHaveLength(1);
    leaving.abort();
    expect(await left).toBeUndefined();
    expect(getEventListeners(leaving.signal, 'abort')).toHaveLength(0);
    first!();
    expect(await servedTurn).toBeTypeOf('function');
    expect(getEventListeners(served.signal, 'abort')).toHaveLength(0);
  });

  it('give a turn back to the pool when nobody waits: as many turns as the count, no more', async () => {
    const turns = new Turns(2);
    const a = await turns.take(new AbortController().signal);
    const b = await turns.take(new AbortController().signal);
    a!();
    b!();
    const held = [await turns.take(new AbortController().signal), await turns.take(new AbortController().signal)];
    expect(held.every((giveBack) => typeof giveBack === 'function')).toBe(true);
    let third = false;
    void turns.take(new AbortController().signal).then(() => (third = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe(false);
  });
});

let sequence = 0;
const record = (): LiveRecord => toLiveRecord({ uuid: `r${sequence++}`, timestamp: 1000 + sequence } as AuditRecord);

describe('PendingRecords', () => {
  it('count a client behind from the fewest records it had waiting since its catch-up, not from zero', () => {
    const pending = new PendingRecords();
    for (let i = 0; i < 5000; i++) pending.addCatchUp(record());
    pending.startHere();
    expect(pending.behind).toBe(0);
    expect(pending.catchingUp).toBe(true);
    // Reads 3000 while 1000 arrive: less behind than it started.
    for (let i = 0; i < 3000; i++) pending.take();
    for (let i = 0; i < 1000; i++) pending.add(record());
    expect(pending.behind).toBe(1000);
    for (let i = 0; i < 2000; i++) pending.take();
    expect(pending.catchingUp).toBe(false);
    expect(pending.size).toBe(1000);
    expect(pending.behind).toBe(0);
    // Stops reading: every record that arrives puts it further behind.
    for (let i = 0; i < 1500; i++) pending.add(record());
    expect(pending.behind).toBe(1500);
  });

  it('hand records out in the order they came, catch-up first, each once', () => {
    const pending = new PendingRecords();
    const catchUp = [record(), record()];
    for (const r of catchUp) pending.addCatchUp(r);
    const live = record();
    pending.add(live);
    expect(pending.has(live.digest)).toBe(true);
    expect([pending.take(), pending.take(), pending.take(), pending.take()]).toEqual([...catchUp, live, undefined]);
    expect(pending.has(live.digest)).toBe(false);
  });
});
