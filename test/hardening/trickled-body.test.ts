/**
 * An upstream that sends its body a byte at a time: the gateway's reading must cost memory in
 * proportion to the body, not to the number of pieces it came in. Run in a process whose heap is
 * far smaller than one join per byte would need (2 MB in single bytes: 64 MB of joins).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

describe('an upstream body sent a byte at a time', () => {
  it('is read whole within a 48 MB heap', { timeout: 60_000 }, async () => {
    const size = 2 * 1024 * 1024;
    const child = spawn(
      process.execPath,
      ['--max-old-space-size=48', '--import', 'tsx', 'test/hardening/trickled-body-reader.ts', String(size)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data));
    child.stderr.on('data', (data: Buffer) => (stderr += data));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect({ code, stderr: stderr.slice(0, 300) }).toEqual({ code: 0, stderr: '' });
    // The note is the body less `{"note":"` and `"}`.
    expect(Number(stdout)).toBe(size - 11);
  });
});
