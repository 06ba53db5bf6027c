import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../../../lib/logger.js';
import { useIncrementalErrorMasking } from './incremental-masking.js';
import { useAccessLog, useErrorLog, type LoggedErrors } from './logging.js';
import { useMetricsToken, type GatewayMetrics } from './metrics.js';
import type { Tracing } from './tracing.js';

export function observabilityPlugins(options: {
  readonly log: Logger;
  readonly loggedErrors: LoggedErrors;
  readonly metrics?: GatewayMetrics | undefined;
  readonly metricsToken?: string | undefined;
  readonly clientErrorCode: (error: unknown) => string | undefined;
}): Plugin[] {
  return [
    useAccessLog(options.log) as Plugin,
    ...(options.metricsToken ? [useMetricsToken(options.metricsToken)] : []),
    ...(options.metrics ? [options.metrics.plugin({ clientErrorCode: options.clientErrorCode })] : []),
    useErrorLog(options.loggedErrors) as Plugin,
  ];
}

/** After the execution plugins: they wrap what those set. */
export function executionObservers(options: {
  readonly maskError: (error: unknown, message: string) => Error;
  readonly loggedErrors: LoggedErrors;
  readonly tracing?: Tracing | undefined;
}): Plugin[] {
  return [
    useIncrementalErrorMasking(options.maskError, options.loggedErrors),
    // Last: its execute function makes the operation's span active around whatever execute function was set before.
    ...(options.tracing ? [options.tracing.plugin()] : []),
  ];
}
