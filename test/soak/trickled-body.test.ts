/**
 * An upstream that sends its body a byte at a time: the gateway's reading must cost memory in
 * proportion to the body, not to the number of pieces it came in. Run in a process whose heap is
 * far smaller than one join per byte would need (2 MB in single bytes: 64 MB of joins).
 */
import { describe, expect, it } from 'vitest';
import { runScript } from '../helpers/process.js';

describe('an upstream body sent a byte at a time', () => {
  it('is read whole within a 48 MB heap', { timeout: 60_000 }, async () => {
    const size = 2 * 1024 * 1024;
    const { code, stdout, stderr } = await runScript(['--max-old-space-size=48'], 'test/soak/trickled-body-reader.ts', [String(size)]);
    expect({ code, stderr: stderr.slice(0, 300) }).toEqual({ code: 0, stderr: '' });
    // The note is the body less `{"note":"` and `"}`.
    expect(Number(stdout)).toBe(size - 11);
  });
});
