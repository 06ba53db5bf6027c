/** The window end search as the upstream sees it: which positions it is asked for, and when it gives up. */
import { describe, expect, it } from 'vitest';
import { MAX_OFFSET } from '../../src/audit/paging/limits.js';
import { locateWindowEnd, type ProbeRound } from '../../src/audit/paging/window.js';

/** A window of `size` rows; every probed position is recorded. */
function windowOf(size: number) {
  const probed: number[] = [];
  const probe: ProbeRound = async (positions) => {
    probed.push(...positions);
    return positions.map((position) => position < size);
  };
  return { probe, probed };
}

describe('window end search', () => {
  it('never asks twice for a position, nor for one it already knows', async () => {
    for (const slack of [0, 1, 3]) {
      for (let size = 1; size <= 300; size += 7) {
        const knownRow = Math.floor(size / 3);
        const { probe, probed } = windowOf(size);
        const end = await locateWindowEnd(probe, knownRow, slack);
        expect(end.lastPresent).toBeLessThan(size);
        expect(end.firstMissing).toBeGreaterThanOrEqual(size);
        expect(end.firstMissing - end.lastPresent - 1).toBeLessThanOrEqual(slack);
        expect(new Set(probed).size).toBe(probed.length);
        expect(probed.every((position) => position > knownRow)).toBe(true);
      }
    }
  });

  it('stops at the largest offset: a window that never ends there ends one past it', async () => {
    const { probe, probed } = windowOf(MAX_OFFSET + 1);
    await expect(locateWindowEnd(probe, 0, 0)).resolves.toEqual({ lastPresent: MAX_OFFSET, firstMissing: MAX_OFFSET + 1 });
    expect(Math.max(...probed)).toBe(MAX_OFFSET + 1);
  });

  it('trusts the first gap of an upstream that contradicts itself', async () => {
    // Rows at 0..7, none at 8, yet rows again from 9 to 99: the first gallop round sees 8 missing and 64 present.
    const contradicting: ProbeRound = async (positions) => positions.map((p) => p !== 8 && p < 100);
    await expect(locateWindowEnd(contradicting, 0, 0)).resolves.toEqual({ lastPresent: 7, firstMissing: 8 });
  });

  it('gives up on an upstream that never runs out with UPSTREAM_INVALID_RESPONSE for the identity service', async () => {
    const endless: ProbeRound = async (positions) => positions.map(() => true);
    await expect(locateWindowEnd(endless, 0, 50)).rejects.toThrow(
      expect.objectContaining({
        code: 'UPSTREAM_INVALID_RESPONSE',
        service: 'identity',
        message: 'The audit report answered inconsistently while paging.',
        detail: expect.objectContaining({ service: 'identity', lastPresent: expect.any(Number) }),
      }),
    );
  });
});
