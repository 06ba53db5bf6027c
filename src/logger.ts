/** Structured JSON logs. Credentials are redacted wherever they appear in a logged object. */
import { pino, type DestinationStream, type Logger } from 'pino';

const secretKeys = [
  'authorization',
  'Authorization',
  'password',
  'clientSecret',
  'client_secret',
  'secret',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'sessionId',
  'session_id',
  'credentials',
  'bearer',
  'x-api-key',
  'vmware-api-session-id',
  'cookie',
  'set-cookie',
  'apiKeys',
];

export const redactPaths = [
  ...secretKeys.map((k) => `["${k}"]`),
  ...secretKeys.map((k) => `*["${k}"]`),
  ...secretKeys.map((k) => `*.*["${k}"]`),
  // An error's log-only detail sits one level deeper (err.detail.x); it should never hold a
  // secret, this is the second line of defence.
  ...secretKeys.map((k) => `*.detail.*["${k}"]`),
];

export function createLogger(options: { level?: string; destination?: DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    options.destination,
  );
}

export type { Logger };
