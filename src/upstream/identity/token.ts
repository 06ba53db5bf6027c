/**
 * OAuth access token for the identity service, shared by every request of the gateway.
 *
 * - One token request in flight at a time: every caller that needs a token awaits the same promise.
 * - Renewed ahead of expiry: once less than max(10 % of the lifetime, 60 s) remains (but never more
 *   than half the lifetime, so short-lived tokens are not renewed on every call), the next caller
 *   starts a renewal in the background and keeps using the still-valid token meanwhile.
 * - Renewal tries the refresh_token grant when a refresh token is held; a refused refresh (400/401)
 *   drops it and falls back to client_credentials. The newest refresh token returned is kept.
 * - A failed request rejects its waiters and is forgotten: the next caller tries again.
 */
import type { Logger } from 'pino';
import type { IdentityConfig } from '../../lib/config.js';
import { UpstreamError } from '../../lib/errors.js';
import { basicAuthorization, SingleFlight, type CredentialLease, type CredentialSource } from '../credentials.js';
import { untilAborted, type Deadline } from '../deadline.js';
import { emit, type UpstreamEvents } from '../events.js';
import type { UpstreamHttp } from '../http.js';
import { tokenResponseSchema, type TokenResponse } from './schemas.js';

export type TokenGrant = 'client_credentials' | 'refresh_token';

export interface TokenStats {
  /** Token endpoint requests made, successful or not. */
  readonly requests: number;
  readonly byGrant: Readonly<Record<TokenGrant, number>>;
  readonly failures: number;
}

export interface TokenManagerOptions {
  readonly http: UpstreamHttp;
  readonly config: IdentityConfig;
  readonly events?: UpstreamEvents;
  /** Clock in ms since epoch; injectable for tests. */
  readonly now?: () => number;
}

interface AccessToken {
  readonly value: string;
  /** From here on the next caller starts a background renewal. */
  readonly renewAt: number;
  /** From here on callers wait for a new token (a little before the real expiry, for transit). */
  readonly expiresAt: number;
}

const MIN_RENEW_MARGIN_MS = 60_000;
const MAX_TRANSIT_SKEW_MS = 5_000;
/** After a failed background renewal, the current token is used a while before trying again. */
const BACKGROUND_RETRY_PAUSE_MS = 5_000;

export class TokenManager implements CredentialSource {
  readonly #options: TokenManagerOptions;
  readonly #now: () => number;
  #current: AccessToken | undefined;
  #refreshToken: string | undefined;
  readonly #renewal = new SingleFlight<AccessToken>();
  #backgroundPausedUntil = 0;
  #stats = { requests: 0, byGrant: { client_credentials: 0, refresh_token: 0 }, failures: 0 };

  constructor(options: TokenManagerOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  stats(): TokenStats {
    return { ...this.#stats, byGrant: { ...this.#stats.byGrant } };
  }

  async acquire(deadline: Deadline, log: Logger): Promise<CredentialLease> {
    const token = await this.#token(deadline, log);
    return {
      headers: { authorization: `Bearer ${token.value}` },
      invalidate: () => {
        // Only the token that failed; a newer one fetched meanwhile stays.
        if (this.#current === token) this.#current = undefined;
      },
    };
  }

  #token(deadline: Deadline, log: Logger): Promise<AccessToken> {
    const now = this.#now();
    const current = this.#current;
    if (current && now < current.expiresAt) {
      // A renewal already under way is joined, not repeated.
      if (now >= current.renewAt && now >= this.#backgroundPausedUntil) {
        this.#renew(log).catch(() => {
          this.#backgroundPausedUntil = this.#now() + BACKGROUND_RETRY_PAUSE_MS;
        });
      }
      return Promise.resolve(current);
    }
    return untilAborted(this.#renew(log), deadline.signal);
  }

  /** Single flight: joins the renewal under way or starts one. */
  #renew(log: Logger): Promise<AccessToken> {
    return this.#renewal.join(() => this.#obtain(log));
  }

  async #obtain(log: Logger): Promise<AccessToken> {
    const refreshToken = this.#refreshToken;
    if (refreshToken !== undefined) {
      try {
        return await this.#grant('refresh_token', log, refreshToken);
      } catch (error) {
        if (!(error instanceof UpstreamError && error.code === 'UPSTREAM_UNAUTHORIZED')) throw error;
        // Refused (expired, revoked, rotated away): forget it. Renewals run one at a time: none newer came meanwhile.
        this.#refreshToken = undefined;
        log.info({ upstream: 'identity' }, 'refresh grant refused; falling back to client_credentials');
      }
    }
    return this.#grant('client_credentials', log);
  }

  async #grant(grant: TokenGrant, log: Logger, refreshToken?: string): Promise<AccessToken> {
    const { config, http, events } = this.#options;
    const form = new URLSearchParams({ grant_type: grant });
    if (refreshToken !== undefined) form.set('refresh_token', refreshToken);
    if (config.scope) form.set('scope', config.scope);

    this.#stats.requests++;
    this.#stats.byGrant[grant]++;
    const requestedAt = this.#now();
    const started = performance.now();
    try {
      // Not tied to any caller's signal: others may be waiting for this very request.
      const answer = await http.request(
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
          retryLikeGet: true,
        },
        { log },
      );
      const token = this.#store(answer, requestedAt);
      log.debug({ upstream: 'identity', grant, expiresInSeconds: answer.expires_in }, 'access token renewed');
      emit(events?.onCredentialRenewal, {
        service: 'identity',
        kind: grant,
        outcome: 'success',
        durationMs: Math.round(performance.now() - started),
      });
      return token;
    } catch (error) {
      this.#stats.failures++;
      emit(events?.onCredentialRenewal, {
        service: 'identity',
        kind: grant,
        // Stryker disable next-line ConditionalExpression,StringLiteral: the HTTP layer rejects with an UpstreamError only
        outcome: error instanceof UpstreamError ? error.code : 'UPSTREAM_UNAVAILABLE',
        durationMs: Math.round(performance.now() - started),
      });
      throw error;
    }
  }

  /** Lifetimes count from when the request was sent, so transit time errs on the safe side. */
  #store(answer: TokenResponse, requestedAt: number): AccessToken {
    const lifetimeMs = answer.expires_in * 1000;
    const renewMargin = Math.min(Math.max(lifetimeMs / 10, MIN_RENEW_MARGIN_MS), lifetimeMs / 2);
    const skew = Math.min(MAX_TRANSIT_SKEW_MS, lifetimeMs / 10);
    // expires_in 0 ("already expired"): handed to the callers that waited for it, never reused.
    const token: AccessToken = {
      value: answer.access_token,
      renewAt: requestedAt + lifetimeMs - renewMargin,
      expiresAt: requestedAt + lifetimeMs - skew,
    };
    if (answer.refresh_token) this.#refreshToken = answer.refresh_token;
    this.#current = token;
    return token;
  }
}
