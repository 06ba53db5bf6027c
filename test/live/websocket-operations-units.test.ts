/**
 * The bookkeeping behind a WebSocket connection's operations (src/server/websocket/operations.ts): what
 * counts as executing against the limits, when an operation's signal aborts and its stream ends,
 * and what a reused id does to the operation it replaces.
 */
import { describe, expect, it, vi } from 'vitest';
import { ConnectionOperations, neverAnswered, Operation } from '../../src/server/websocket/operations.js';

/** A stream whose `return` the test can watch. */
function stream() {
  const returned = vi.fn();
  return { returned, stream: { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }), return: returned } };
}

const settledSoon = async () => {
  await Promise.resolve();
  await Promise.resolve();
};

describe('an operation', () => {
  it('executes until it ends: its signal aborts, and it settles once', () => {
    const settled = vi.fn();
    const operation = new Operation(settled);
    expect(operation).toMatchObject({ executing: true, streaming: false, ended: false, superseded: false });
    expect(operation.signal.aborted).toBe(false);

    operation.end();
    operation.end(true);
    expect(operation).toMatchObject({ executing: false, streaming: false, ended: true, superseded: true });
    expect(operation.signal.aborted).toBe(true);
    expect(settled).toHaveBeenCalledTimes(1);
  });

  it('stops executing once it streams, and its stream ends with it', async () => {
    const settled = vi.fn();
    const operation = new Operation(settled);
    const { stream: live, returned } = stream();
    operation.attach(live);
    expect(operation).toMatchObject({ executing: false, streaming: true });
    expect(settled).toHaveBeenCalledTimes(1);

    operation.end();
    operation.end();
    await settledSoon();
    expect(returned).toHaveBeenCalledTimes(1);
    expect(operation.streaming).toBe(false);
    expect(settled).toHaveBeenCalledTimes(1);
  });

  it('ends a stream attached after it ended at once, and settles once', async () => {
    const settled = vi.fn();
    const operation = new Operation(settled);
    operation.end();
    const { stream: late, returned } = stream();
    operation.attach(late);
    await settledSoon();
    expect(returned).toHaveBeenCalledTimes(1);
    expect(settled).toHaveBeenCalledTimes(1);
    expect(operation.streaming).toBe(false);
  });

  it('survives a stream whose return fails', async () => {
    const operation = new Operation();
    operation.attach({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }), return: () => Promise.reject(new Error('gone')) });
    operation.end();
    await settledSoon();
    expect(operation.ended).toBe(true);
  });
});

describe("a connection's operations", () => {
  it('refuses one past the connection\'s limit, and counts again once one has ended', () => {
    const connection = new ConnectionOperations({ perConnection: 2, total: 10 }, { executing: 0 });
    const [a, b] = [connection.start('a', {}), connection.start('b', {})];
    expect(connection.executionRefusal).toBe(
      'A WebSocket connection runs at most 2 operations at once; send this one when another has finished.',
    );
    a.end();
    expect(connection.executionRefusal).toBeUndefined();
    // A stream no longer executes: room for two more.
    b.attach(stream().stream);
    connection.start('c', {});
    expect(connection.executionRefusal).toBeUndefined();
  });

  it('refuses one past the total of all connections', () => {
    const [limits, all] = [{ perConnection: 5, total: 2 }, { executing: 0 }];
    const [first, second] = [new ConnectionOperations(limits, all), new ConnectionOperations(limits, all)];
    first.start('a', {});
    expect(second.executionRefusal).toBeUndefined();
    second.start('a', {});
    expect(first.executionRefusal).toBe('The gateway is running too many WebSocket operations at once; retry later.');
    expect(second.executionRefusal).toBe('The gateway is running too many WebSocket operations at once; retry later.');
  });

  it('ends the operation a reused id replaces, which is then never answered', async () => {
    const connection = new ConnectionOperations({ perConnection: 5, total: 5 }, { executing: 0 });
    const [firstPayload, secondPayload] = [{}, {}];
    const first = connection.start('a', firstPayload);
    const second = connection.start('a', secondPayload);
    expect(first).toMatchObject({ ended: true, superseded: true });
    expect(first.signal.aborted).toBe(true);
    expect(second).toMatchObject({ ended: false, superseded: false });

    const answer = connection.complete('a', firstPayload);
    expect(answer).toBeInstanceOf(Promise);
    const outcome = await Promise.race([answer, new Promise((resolve) => setTimeout(() => resolve('pending'), 20))]);
    expect(outcome).toBe('pending');
    // The replacement is still the id's operation.
    second.attach(stream().stream);
    expect(connection.streaming).toBe(1);
  });

  it("completes an operation by its payload and forgets it under its id", () => {
    const connection = new ConnectionOperations({ perConnection: 5, total: 5 }, { executing: 0 });
    const payload = {};
    const operation = connection.start('a', payload);
    operation.attach(stream().stream);
    expect(connection.streaming).toBe(1);
    expect(connection.complete('a', payload)).toBeUndefined();
    expect(operation.ended).toBe(true);
    expect(connection.streaming).toBe(0);
    // A payload it never started completes nothing.
    expect(connection.complete('a', {})).toBeUndefined();
    // The id is free: a new operation under it replaces nothing.
    connection.start('a', {});
    expect(operation.superseded).toBe(false);
  });

  it('forgets an id only for the operation that holds it', () => {
    const connection = new ConnectionOperations({ perConnection: 5, total: 5 }, { executing: 0 });
    const first = connection.start('a', {});
    const second = connection.start('a', {});
    connection.forget('a', first);
    second.attach(stream().stream);
    expect(connection.streaming).toBe(1);
    connection.forget('a', second);
    expect(connection.streaming).toBe(0);
  });

  it('ends every operation when its socket closes, streaming or executing, and counts only open streams', () => {
    const [limits, all] = [{ perConnection: 5, total: 2 }, { executing: 0 }];
    const connection = new ConnectionOperations(limits, all);
    const executing = connection.start('a', {});
    const streaming = connection.start('b', {});
    streaming.attach(stream().stream);
    const ended = connection.start('c', {});
    ended.attach(stream().stream);
    ended.end();
    expect(connection.streaming).toBe(1);

    connection.endAll();
    expect([executing.ended, streaming.ended]).toEqual([true, true]);
    expect(connection.streaming).toBe(0);
    // Nothing executes any more: another connection sharing the total may run two.
    const other = new ConnectionOperations(limits, all);
    other.start('a', {});
    expect(other.executionRefusal).toBeUndefined();
    // The ids are free again.
    connection.start('a', {});
    expect(executing.superseded).toBe(false);
  });
});

describe('neverAnswered', () => {
  it('never settles', async () => {
    const outcome = await Promise.race([neverAnswered().then(() => 'settled', () => 'rejected'), new Promise((resolve) => setTimeout(() => resolve('pending'), 20))]);
    expect(outcome).toBe('pending');
  });
});
