/**
 * The last line of defence: what the process does with an error nothing else handled. Every
 * request's failure should end as a contract error long before this; reaching it is a bug.
 *
 * - An unhandled promise rejection is logged at `fatal` (with the request id when it came from
 *   a request) and the gateway keeps serving: the request it belonged to has already been
 *   answered or failed, and exiting would let one bad request end every other.
 * - An uncaught exception is logged at `fatal` the same way, then the process exits with code 1:
 *   synchronous state may be half-updated, so a restart is safer than serving on.
 */
import type { Logger } from '../lib/logger.js';
import { currentRequestId } from '../gateway/plugins/http/request-id.js';

export interface ProcessEvents {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', listener: (error: Error) => void): unknown;
}

export function installLastResort(log: Logger, events: ProcessEvents, exit: (code: number) => void): void {
  const where = () => {
    const requestId = currentRequestId();
    return requestId ? { requestId } : {};
  };
  events.on('unhandledRejection', (reason) => {
    log.fatal({ ...where(), err: reason }, 'unhandled promise rejection: a bug; the gateway keeps serving');
  });
  events.on('uncaughtException', (error) => {
    log.fatal({ ...where(), err: error }, 'uncaught exception: a bug; exiting with code 1');
    exit(1);
  });
}
