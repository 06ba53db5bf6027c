/**
 * Issued OAuth tokens. Access tokens are JWT-shaped (three base64url parts, random signature).
 * Refresh tokens rotate: every refresh answers a new one and the one presented is spent, so a
 * client must always keep the newest (the stricter reading of "rotation is unknown").
 */
import { randomBytes, randomUUID } from 'node:crypto';

export interface IssuedToken {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
}

interface RefreshGrant {
  readonly clientId: string;
  readonly scope: string;
}

/** Past this many live access tokens, expired ones are swept on the next issue. */
const SWEEP_THRESHOLD = 10_000;

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

export class TokenStore {
  private readonly accessTokens = new Map<string, number>(); // token -> expiry (epoch ms)
  private readonly refreshTokens = new Map<string, RefreshGrant>();

  constructor(
    private readonly now: () => number,
    private readonly issuer: string,
  ) {}

  issue(clientId: string, scope: string, lifetimeSeconds: number): IssuedToken {
    const issuedAt = this.now();
    if (this.accessTokens.size > SWEEP_THRESHOLD) this.sweep(issuedAt);
    const access = this.jwt(clientId, scope, issuedAt, lifetimeSeconds);
    this.accessTokens.set(access, issuedAt + lifetimeSeconds * 1000);
    const refresh = randomBytes(24).toString('base64url');
    this.refreshTokens.set(refresh, { clientId, scope });
    return { access_token: access, token_type: 'Bearer', expires_in: lifetimeSeconds, refresh_token: refresh, scope };
  }

  /** Valid while now is before its expiry: a token issued with lifetime 0 is already expired. */
  isValidAccessToken(token: string): boolean {
    const expiry = this.accessTokens.get(token);
    return expiry !== undefined && this.now() < expiry;
  }

  /** Spends a refresh token of this client; undefined when unknown, spent or another client's. */
  redeemRefreshToken(token: string, clientId: string): RefreshGrant | undefined {
    const grant = this.refreshTokens.get(token);
    if (!grant || grant.clientId !== clientId) return undefined;
    this.refreshTokens.delete(token);
    return grant;
  }

  expireAccessTokens(): void {
    this.accessTokens.clear();
  }

  expireRefreshTokens(): void {
    this.refreshTokens.clear();
  }

  private sweep(now: number): void {
    for (const [token, expiry] of this.accessTokens) if (expiry <= now) this.accessTokens.delete(token);
  }

  private jwt(clientId: string, scope: string, issuedAt: number, lifetimeSeconds: number): string {
    const iat = Math.floor(issuedAt / 1000);
    const header = { alg: 'RS256', typ: 'JWT', kid: '1701-signing' };
    const payload = {
      jti: randomUUID(),
      prn: `${clientId}@acme`,
      domain: 'System Domain',
      sub: clientId,
      cid: clientId,
      scp: scope,
      iss: `${this.issuer}/SAAS/auth`,
      aud: `${this.issuer}/SAAS/auth/oauthtoken`,
      iat,
      exp: iat + lifetimeSeconds,
    };
    return `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}.${base64url(randomBytes(64))}`;
  }
}
