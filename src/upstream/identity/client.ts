/** The identity service's operations the gateway uses, and its OAuth token, shared by every call. */
import type { Logger } from 'pino';
import type { IdentityConfig } from '../../lib/config.js';
import { UpstreamError } from '../../lib/errors.js';
import { basicAuthorization, reportedRenewal, SharedCredential } from '../credentials.js';
import { untilAborted, type Deadline } from '../deadline.js';
import type { UpstreamHttp } from '../http.js';
import type { AuditReportPage, AuditReportQuery, CallOptions, IdentityApi, UpstreamEvents } from '../types.js';
import type { AuditPageCache, AuditPageOwner, MeasuredAuditPage } from './audit-cache.js';
import { pageHeapBytes, readAuditRows } from './audit-row-parsing.js';
import { isAuditReportEnvelope } from './fast-checks.js';
import { auditReportEnvelopeSchema, tokenResponseSchema } from './schemas.js';

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
        // Rows past pageSize are no page's: reading millions of them (16 MB) would cost a page's heap many times over.
        check: (report) => (report.data.length > pageSize ? `${report.data.length} rows where pageSize ${pageSize} was asked` : undefined),
        credentials: this.tokens,
      },
      call,
    );
    const read = readAuditRows(report.data);
    if (read.failed.length > 0) {
      call.log.warn(
        {
          upstream: 'identity',
          route: 'audit-report',
          unreadableRows: read.failed.length,
          positions: read.failed.slice(0, 20),
          firstReason: (read.rows[read.failed[0]!] as { reason?: string }).reason,
        },
        'audit rows with unreadable records kept in place',
      );
    }
    return { page: { rows: read.rows }, heapBytes: pageHeapBytes(bodyBytes, read) };
  }
}

interface AccessToken {
  readonly value: string;
  /** From here on the next caller starts a background renewal. */
  readonly renewAt: number;
  /** From here on callers wait for a new token (a little before the real expiry, for transit). */
  readonly expiresAt: number;
}

/** Renewal starts once less than max(10 %, this) of a token's lifetime is left. */
const MIN_RENEW_MARGIN_MS = 60_000;
const MAX_TRANSIT_SKEW_MS = 5_000;
/** After a failed background renewal, the current token is used a while before trying again. */
const BACKGROUND_RETRY_PAUSE_MS = 5_000;

/** Renewed before it ends: the refresh grant first, client_credentials if that is refused. */
export class TokenManager extends SharedCredential<AccessToken> {
  #refreshToken: string | undefined;
  #backgroundPausedUntil = 0;
  #stats = { requests: 0, byGrant: { client_credentials: 0, refresh_token: 0 }, failures: 0 };

  constructor(
    private readonly http: UpstreamHttp,
    private readonly config: IdentityConfig,
    private readonly events: UpstreamEvents | undefined,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  stats() {
    return { ...this.#stats, byGrant: { ...this.#stats.byGrant } };
  }

  protected headers(token: AccessToken) {
    return { authorization: `Bearer ${token.value}` };
  }

  protected override valid(deadline: Deadline, log: Logger): AccessToken | Promise<AccessToken> {
    const now = this.now();
    const current = this.current;
    if (!current || now >= current.expiresAt) return untilAborted(this.renew(log), deadline.signal);
    // A renewal already under way is joined, not repeated.
    if (now >= current.renewAt && now >= this.#backgroundPausedUntil) {
      this.renew(log).catch(() => {
        this.#backgroundPausedUntil = this.now() + BACKGROUND_RETRY_PAUSE_MS;
      });
    }
    return current;
  }

  protected async obtain(log: Logger): Promise<AccessToken> {
    const refreshToken = this.#refreshToken;
    if (refreshToken !== undefined) {
      try {
        return await this.#grant('refresh_token', log, refreshToken);
      } catch (error) {
        if (!(error instanceof UpstreamError && error.code === 'UPSTREAM_UNAUTHORIZED')) throw error;
        // Refused (expired, revoked, rotated away): forget it; renewals run one at a time, so none newer came.
        this.#refreshToken = undefined;
        log.info({ upstream: 'identity' }, 'refresh grant refused; falling back to client_credentials');
      }
    }
    return this.#grant('client_credentials', log);
  }

  #grant(grant: 'client_credentials' | 'refresh_token', log: Logger, refreshToken?: string): Promise<AccessToken> {
    const { config } = this;
    const form = new URLSearchParams({ grant_type: grant });
    if (refreshToken !== undefined) form.set('refresh_token', refreshToken);
    if (config.scope) form.set('scope', config.scope);
    this.#stats.requests++;
    this.#stats.byGrant[grant]++;
    const requestedAt = this.now();
    return reportedRenewal(this.events, { service: 'identity', kind: grant }, this.#stats, async () => {
      const { value: answer } = await this.http.request(
        {
          route: 'token',
          method: 'POST',
          path: '/SAAS/auth/oauthtoken',
          headers: {
            authorization: basicAuthorization(config.clientId, config.clientSecret),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: form.toString(),
          secrets: [refreshToken],
          schema: tokenResponseSchema,
          credentialRoute: true,
        },
        { log },
      );
      log.debug({ upstream: 'identity', grant, expiresInSeconds: answer.expires_in }, 'access token renewed');
      // Lifetimes count from when the request was sent, so transit time errs on the safe side.
      const lifetimeMs = answer.expires_in * 1000;
      const renewMargin = Math.min(Math.max(lifetimeMs / 10, MIN_RENEW_MARGIN_MS), lifetimeMs / 2);
      const skew = Math.min(MAX_TRANSIT_SKEW_MS, lifetimeMs / 10);
      // expires_in 0 ("already expired"): handed to the callers that waited for it, never reused.
      this.current = {
        value: answer.access_token,
        renewAt: requestedAt + lifetimeMs - renewMargin,
        expiresAt: requestedAt + lifetimeMs - skew,
      };
      if (answer.refresh_token) this.#refreshToken = answer.refresh_token;
      return this.current;
    });
  }
}
