/** A request's logger is made when a line is written, and writes what an eager child would. */
import { describe, expect, it, vi } from 'vitest';
import { createLogger, lazyChild } from '../../src/lib/logger.js';
import { MemoryLog } from '../helpers/memory-log.js';

describe('lazyChild', () => {
  it('writes its bindings on every line, with redaction, and makes the child once', () => {
    const out = new MemoryLog();
    const parent = createLogger({ level: 'info', destination: out });
    const child = vi.spyOn(parent, 'child');
    const log = lazyChild(parent, { requestId: 'r-1' });
    log.info({ authorization: 'Bearer x' }, 'first');
    log.warn('second');
    log.child({ component: 'c' }).error('third');
    expect(out.lines().map((l) => [l.requestId, l.msg])).toEqual([
      ['r-1', 'first'],
      ['r-1', 'second'],
      ['r-1', 'third'],
    ]);
    expect(out.lines()[0]!.authorization).toBe('[redacted]');
    expect(out.lines()[2]!.component).toBe('c');
    // The request's child once; the second call is the component's child of it.
    expect(child.mock.calls.map(([bindings]) => bindings)).toEqual([{ requestId: 'r-1' }, { component: 'c' }]);
  });

  it('makes no child when nothing is written at an enabled level', () => {
    const out = new MemoryLog();
    const parent = createLogger({ level: 'warn', destination: out });
    const child = vi.spyOn(parent, 'child');
    const log = lazyChild(parent, { requestId: 'r-2' });
    log.info({ a: 1 }, 'dropped');
    log.debug('dropped');
    expect(log.isLevelEnabled('info')).toBe(false);
    expect(log.isLevelEnabled('warn')).toBe(true);
    expect(child).not.toHaveBeenCalled();
    log.error('kept');
    expect(child).toHaveBeenCalledTimes(1);
    expect(out.lines()).toMatchObject([{ requestId: 'r-2', msg: 'kept', level: 50 }]);
  });
});
