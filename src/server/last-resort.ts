/** A bug nothing handled: a rejection is logged and serving goes on; an uncaught exception may leave state half-updated. */
import type { Logger } from '../lib/logger.js';
import { currentRequestId } from '../gateway/plugins/http/request-id.js';

export type ProcessEvents = Pick<NodeJS.Process, 'on'>;

export function installLastResort(log: Logger, events: ProcessEvents, exit: (code: number) => void): void {
  events.on('unhandledRejection', (reason) => {
    log.fatal({ requestId: currentRequestId(), err: reason }, 'unhandled promise rejection: a bug; the gateway keeps serving');
  });
  events.on('uncaughtException', (error) => {
    log.fatal({ requestId: currentRequestId(), err: error }, 'uncaught exception: a bug; exiting with code 1');
    exit(1);
  });
}
