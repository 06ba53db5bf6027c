/**
 * The send queue of one WebSocket (src/server/compat/graphql-ws-binding.ts): its bound, sized from the heap, and
 * what it counts, refuses and cuts off.
 */
import { describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { PER_MESSAGE_BYTES, SendQueue, sendQueueBytes } from '../../src/server/compat/graphql-ws-binding.js';

/** A socket that keeps the callbacks of what it was sent, for the test to complete. */
function fakeSocket() {
  const pending: (() => void)[] = [];
  const socket = {
    OPEN: 1,
    readyState: 1,
    bufferedAmount: 0,
    send: vi.fn((_data: string, done: () => void) => pending.push(done)),
    terminate: vi.fn(),
  };
  return { socket, asWebSocket: socket as unknown as WebSocket, pending };
}

describe('the send queue bound', () => {
  it('is 1/32 of the heap: 8 MB at the production 256 MB, at least 1 MB', () => {
    expect(sendQueueBytes(256 * 1024 * 1024)).toBe(8 * 1024 * 1024);
    expect(sendQueueBytes(4 * 1024 * 1024 * 1024)).toBe(128 * 1024 * 1024);
    expect(sendQueueBytes(8 * 1024 * 1024)).toBe(1024 * 1024);
  });
});

describe('a send queue', () => {
  it('counts what waits, each message with its overhead, until ws has handed it over', async () => {
    const { asWebSocket, pending } = fakeSocket();
    const queue = new SendQueue(asWebSocket, 10_000, () => undefined);
    const sent = queue.send('é'.repeat(100));
    expect(queue.queued).toBe(200 + PER_MESSAGE_BYTES);
    pending.shift()!();
    await sent;
    expect(queue.queued).toBe(0);
  });

  it('queues while below its bound, even a message larger than the bound, and refuses once past it', async () => {
    const { socket, asWebSocket } = fakeSocket();
    const full = vi.fn();
    const queue = new SendQueue(asWebSocket, 1000, full);
    void queue.send('x'.repeat(5000));
    expect(full).not.toHaveBeenCalled();
    await queue.send('{"type":"pong"}');
    expect(full).toHaveBeenCalledTimes(1);
    expect(socket.send).toHaveBeenCalledTimes(1);
  });

  it('sends nothing once its socket is closing', async () => {
    const { socket, asWebSocket } = fakeSocket();
    socket.readyState = 2;
    const full = vi.fn();
    await new SendQueue(asWebSocket, 1000, full).send('x');
    expect(socket.send).not.toHaveBeenCalled();
    expect(full).not.toHaveBeenCalled();
  });

  it('cuts its socket off only when something still waits for the client', () => {
    const { socket, asWebSocket } = fakeSocket();
    const queue = new SendQueue(asWebSocket, 1000, () => undefined);
    queue.endIfUndrained();
    expect(socket.terminate).not.toHaveBeenCalled();
    void queue.send('x');
    queue.endIfUndrained();
    expect(socket.terminate).toHaveBeenCalledTimes(1);
  });
});
