/** totalCount when the page did not reach the window's end: the count comes from one-row probes. */
import { describe, expect, it } from 'vitest';
import type { AuditScope } from '../../src/audit/paging/cursor.js';
import { countWindow, windowReader } from '../../src/audit/paging/window.js';
import { fakeAudit, type FakeAudit } from '../helpers/audit-fake-upstream.js';

const NOW = Date.UTC(2026, 10, 21);
const scope: AuditScope = { fromMillis: NOW - 3_600_000, toMillis: NOW, pinnedAt: NOW, objectType: null, action: null };
const readerOf = (audit: FakeAudit) => {
  const context = audit.context();
  return windowReader((query) => context.loaders.auditReport.load(query), scope);
};

describe('countWindow', () => {
  it.each([0, 1, 2, 9, 1234])('counts a window of %i records exactly by probing from its start', async (size) => {
    const audit = fakeAudit(size);
    await expect(countWindow(readerOf(audit), undefined)).resolves.toBe(size);
    expect(audit.calls.every((call) => call.pageSize === 1)).toBe(true);
  });

  it('takes an exact size a page already learnt without asking the upstream', async () => {
    const audit = fakeAudit(40);
    await expect(countWindow(readerOf(audit), Promise.resolve(17))).resolves.toBe(17);
    await expect(countWindow(readerOf(audit), 0)).resolves.toBe(0);
    expect(audit.calls).toEqual([]);
  });
});
