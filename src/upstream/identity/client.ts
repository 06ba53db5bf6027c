/** The identity service's operations the gateway uses, each with the shared bearer token. */
import type { UpstreamHttp } from '../http.js';
import type { AuditReportPage, AuditReportQuery, CallOptions, IdentityApi } from '../types.js';
import type { AuditPageCache, AuditPageOwner, MeasuredAuditPage } from './audit-cache.js';
import { pageHeapBytes, readAuditRows } from './audit-row-parsing.js';
import { isAuditReportEnvelope } from './fast-checks.js';
import { auditReportEnvelopeSchema } from './schemas.js';
import type { TokenManager } from './token.js';

export class IdentityClient implements IdentityApi {
  constructor(
    private readonly http: UpstreamHttp,
    private readonly tokens: TokenManager,
    /** Serves closed windows' pages (AUDIT_CACHE_MAX_BYTES > 0), kept apart by `owner`. */
    private readonly cache?: { readonly pages: AuditPageCache; readonly owner: AuditPageOwner },
  ) {}

  async auditReport(query: AuditReportQuery, call: CallOptions): Promise<AuditReportPage> {
    const { cache } = this;
    if (cache) return cache.pages.read(cache.owner, query, call, (c) => this.measuredAuditReport(query, c));
    return (await this.measuredAuditReport(query, call)).page;
  }

  async measuredAuditReport(query: AuditReportQuery, call: CallOptions): Promise<MeasuredAuditPage> {
    const { fromMillis, toMillis, objectType, action, pageSize, startIndex } = query;
    const { value: report, bodyBytes } = await this.http.request(
      {
        route: 'audit-report',
        method: 'GET',
        path: '/analytics/reports/audit/',
        query: { fromMillis, toMillis, objectType, action, pageSize, startIndex },
        schema: auditReportEnvelopeSchema,
        accepts: isAuditReportEnvelope,
        // An upstream never sends more than asked: rows past pageSize are no part of the page, and
        // reading them (millions, in a 16 MB body) would cost the heap of a page many times over.
        check: (report) => (report.data.length > pageSize ? `${report.data.length} rows where pageSize ${pageSize} was asked` : undefined),
        credentials: this.tokens,
      },
      call,
    );
    const read = readAuditRows(report.data);
    const { rows, failed } = read;
    if (failed.length > 0) {
      call.log.warn(
        {
          upstream: 'identity',
          route: 'audit-report',
          unreadableRows: failed.length,
          positions: failed.slice(0, 20),
          firstReason: (rows[failed[0]!] as { reason?: string }).reason,
        },
        'audit rows with unreadable records kept in place',
      );
    }
    return { page: { rows }, heapBytes: pageHeapBytes(bodyBytes, read) };
  }
}
