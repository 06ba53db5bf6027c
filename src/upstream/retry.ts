/** Not undici's RetryHandler: it has no jitter, ignores the call's deadline and counts no retries for the log. */

export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** Backoff before retry n is drawn from [base·2ⁿ/2, base·2ⁿ], capped at maxDelayMs. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { maxRetries: 4, baseDelayMs: 100, maxDelayMs: 2_000 };

/** "Not now" rather than "never": worth another try of an idempotent request. */
export const retryableStatuses: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** Failures that prove the request never left: safe to repeat even for a POST. */
const notSentErrorCodes: ReadonlySet<string | undefined> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const connectionErrorCodes: ReadonlySet<string | undefined> = new Set([
  ...notSentErrorCodes,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

export function errorCodeOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 3; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isRetryableConnectionError(code: string | undefined, method: string): boolean {
  return (method === 'GET' ? connectionErrorCodes : notSentErrorCodes).has(code);
}

export function backoffMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** `Retry-After` as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header) ?? '';
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
