/**
 * What the compiled-query cache counts for an operation against the heap the operation's compiled
 * query takes once run hot (the worst measured: one full audit page, 5.7 bytes per character of
 * generated code): never less, and not so much more that the cache would keep far fewer than it may.
 */
import { describe, expect, it } from 'vitest';
import { runScript } from '../helpers/process.js';

describe('a compiled audit page, run hot', () => {
  it('is counted for at least the heap it takes', { timeout: 60_000 }, async () => {
    const { code, stdout, stderr } = await runScript(
      ['--expose-gc', '--no-compilation-cache'],
      'test/soak/compiled-query-heap.ts',
      ['1', '6', '300'],
    );
    expect({ code, stderr: stderr.slice(0, 300) }).toEqual({ code: 0, stderr: '' });
    const { entries, counted, freed } = JSON.parse(stdout) as { entries: number; counted: number; freed: number };
    expect(entries).toBe(6);
    expect(counted).toBeGreaterThanOrEqual(freed);
    expect(counted).toBeLessThan(2.5 * freed);
  });
});
