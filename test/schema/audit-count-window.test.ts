/** totalCount when the page did not reach the window's end: the count comes from one-row probes. */
import { describe, expect, it } from 'vitest';
import { countWindow } from '../../src/gateway/schema/audit/total-count.js';
import type { AuditScope } from '../../src/audit/paging/scope.js';
import { fakeAudit } from '../helpers/audit-fake-upstream.js';

const NOW = Date.UTC(2026, 10, 21);
const scope: AuditScope = { fromMillis: NOW - 3_600_000, toMillis: NOW, pinnedAt: NOW, objectType: null, action: null };

describe('countWindow', () => {
  it.each([0, 1, 2, 9, 1234])('counts a window of %i records exactly by probing from its start', async (size) => {
    const audit = fakeAudit(size);
    await expect(countWindow(audit.context(), scope, { unknown: true })).resolves.toBe(size);
    expect(audit.calls.every((call) => call.pageSize === 1)).toBe(true);
  });

  it('takes an exact size a page already learnt without asking the upstream', async () => {
    const audit = fakeAudit(40);
    await expect(countWindow(audit.context(), scope, Promise.resolve({ exact: 17 }))).resolves.toBe(17);
    expect(audit.calls).toEqual([]);
  });
});
