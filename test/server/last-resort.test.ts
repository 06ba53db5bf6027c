import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { installLastResort, type ProcessEvents } from '../../src/server/last-resort.js';
import { createLogger } from '../../src/lib/logger.js';
import { withRequestId } from '../../src/gateway/plugins/http/request-id.js';
import { MemoryLog } from '../helpers/memory-log.js';

function setUp() {
  const memory = new MemoryLog();
  const events = new EventEmitter();
  const exits: number[] = [];
  installLastResort(createLogger({ destination: memory }), events as unknown as ProcessEvents, (code) => exits.push(code));
  return { memory, events, exits };
}

describe('the last line of defence', () => {
  it('logs an unhandled rejection at fatal with its request id, and keeps serving', async () => {
    const { memory, events, exits } = setUp();
    await withRequestId('req-42', async () => {
      await Promise.resolve();
      events.emit('unhandledRejection', new Error('nobody awaited me'));
    });
    const [line] = memory.lines();
    expect(line).toMatchObject({ level: 60, requestId: 'req-42', err: { message: 'nobody awaited me' } });
    expect(exits).toEqual([]);
  });

  it('logs an uncaught exception at fatal, then exits with code 1', () => {
    const { memory, events, exits } = setUp();
    events.emit('uncaughtException', new TypeError('boom'));
    const [line] = memory.lines();
    expect(line).toMatchObject({ level: 60, err: { type: 'TypeError', message: 'boom' } });
    expect(line!.requestId).toBeUndefined();
    expect(exits).toEqual([1]);
  });

  it('names the request even when the failure surfaces in a later tick', async () => {
    const { memory, events } = setUp();
    await withRequestId('req-late', () => new Promise<void>((resolve) => setTimeout(() => {
      events.emit('uncaughtException', new Error('in a timer'));
      resolve();
    }, 1)));
    expect(memory.lines()[0]).toMatchObject({ requestId: 'req-late' });
  });
});
