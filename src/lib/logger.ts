/** Structured JSON logs (readable lines with `pretty`), credentials redacted wherever they appear. */
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';

// Headers, then credentials and tokens by name.
const secretKeys = [
  'authorization', 'Authorization', 'bearer', 'x-api-key', 'vmware-api-session-id', 'cookie', 'set-cookie',
  'password', 'clientSecret', 'client_secret', 'secret', 'credentials', 'apiKeys',
  'token', 'accessToken', 'access_token', 'refreshToken', 'refresh_token', 'sessionId', 'session_id',
];

// An error's log-only detail sits one level deeper (err.detail.x): a second line of defence.
const redactPaths = ['', '*', '*.*', '*.detail.*'].flatMap((prefix) => secretKeys.map((k) => `${prefix}["${k}"]`));

/** The ids of the span active where a line is written (OpenTelemetry's async-local context). */
function activeTraceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpanContext(context.active());
  return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
}

interface LoggerSetup {
  readonly level?: string;
  readonly destination?: DestinationStream;
  readonly pretty?: boolean;
  /** trace_id/span_id of the active span on every line (only with tracing configured). */
  readonly traceIds?: boolean;
}

export function createLogger(options: LoggerSetup = {}): Logger {
  const destination = options.pretty
    ? pinoPretty({
        sync: true,
        colorize: process.stdout.isTTY === true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,service',
        ...(options.destination ? { destination: options.destination as NodeJS.WritableStream } : {}),
      })
    : options.destination;
  return pino(
    {
      level: options.level ?? 'info',
      ...(options.traceIds ? { mixin: activeTraceIds } : {}),
      base: { service: 'gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    destination,
  );
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
/** What the parent answers alike until the child is made. */
const PARENT_KEYS = new Set<string | symbol>(['isLevelEnabled', 'level', 'levelVal', 'levels']);
const noop = () => {};

/** `parent.child(bindings)`, made when first used: a request that writes nothing never pays for its redaction. */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const made = () => (child ??= parent.child(bindings));
  return new Proxy(parent, {
    get(_target, key) {
      if (!child && typeof key === 'string' && LEVELS.has(key) && !parent.isLevelEnabled(key)) return noop;
      const target = !child && PARENT_KEYS.has(key) ? parent : made();
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(_target, key, value) {
      return Reflect.set(made(), key, value);
    },
  });
}

export type { Logger };
