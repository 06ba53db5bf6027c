/** `POST /SAAS/auth/oauthtoken`: client_credentials and refresh_token grants (spec 4.1). */
import { basicCredentials, jsonAnswer, type Answer, type RequestContext } from './http-util.js';
import type { SimulatorState } from './state.js';

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const DEFAULT_SCOPE = 'admin';

/** The grant_type as sent: body first, then the query string (real deployments accept both). */
export function grantTypeOf(ctx: RequestContext): string | undefined {
  const value = new URLSearchParams(ctx.body).get('grant_type') || ctx.url.searchParams.get('grant_type');
  return value || undefined;
}

function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): Answer {
  return jsonAnswer(status, { error, error_description: description }, { ...NO_STORE, ...headers });
}

const invalidClient = () =>
  oauthError(401, 'invalid_client', 'Client authentication failed.', { 'www-authenticate': 'Basic realm="oauth"' });

/** The authenticated client id: HTTP Basic when sent (it wins), else client_id/client_secret form fields. */
function authenticateClient(ctx: RequestContext, form: URLSearchParams, state: SimulatorState): string | undefined {
  const matches = (id: string | null, secret: string | null) => id !== null && secret !== null && state.clients.get(id) === secret;
  if (ctx.headers.authorization !== undefined) {
    const basic = basicCredentials(ctx.headers);
    if (!basic) return undefined;
    if (matches(basic.user, basic.password)) return basic.user;
    // RFC 6749 2.3.1 form-encodes Basic credentials; some clients do, most do not.
    const [id, secret] = [formDecode(basic.user), formDecode(basic.password)];
    return matches(id, secret) ? (id ?? undefined) : undefined;
  }
  const [id, secret] = [form.get('client_id'), form.get('client_secret')];
  return matches(id, secret) ? (id ?? undefined) : undefined;
}

function formDecode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

export function handleToken(ctx: RequestContext, state: SimulatorState): Answer {
  if (ctx.method !== 'POST') {
    return oauthError(405, 'invalid_request', 'The token endpoint accepts POST only.', { allow: 'POST' });
  }
  const form = new URLSearchParams(ctx.body);
  const clientId = authenticateClient(ctx, form, state);
  if (clientId === undefined) return invalidClient();

  const grantType = grantTypeOf(ctx);
  const requestedScope = form.get('scope') || ctx.url.searchParams.get('scope') || undefined;
  if (grantType === undefined) return oauthError(400, 'invalid_request', 'Missing grant_type parameter.');

  if (grantType === 'client_credentials') {
    const token = state.tokens.issue(clientId, requestedScope ?? DEFAULT_SCOPE, state.tokenLifetimeSeconds);
    return jsonAnswer(200, token, NO_STORE);
  }
  if (grantType === 'refresh_token') {
    const refreshToken = form.get('refresh_token') || ctx.url.searchParams.get('refresh_token');
    if (!refreshToken) return oauthError(400, 'invalid_request', 'Missing refresh_token parameter.');
    if (state.faults.takeRefusal()) return oauthError(400, 'invalid_grant', 'Invalid refresh token.');
    const grant = state.tokens.redeemRefreshToken(refreshToken, clientId);
    if (!grant) return oauthError(400, 'invalid_grant', 'Invalid refresh token.');
    const token = state.tokens.issue(clientId, requestedScope ?? grant.scope, state.tokenLifetimeSeconds);
    return jsonAnswer(200, token, NO_STORE);
  }
  return oauthError(400, 'unsupported_grant_type', 'Unsupported grant type.');
}
