/**
 * Yoga as Node's request listener, as `yoga(request, response)` is, but for an error that escapes
 * Yoga's own handling (a plugin's onRequest or onResponse hook, the server adapter itself):
 * whatwg-node's listener answers that with a 500 whose text/plain body is the error's stack, and
 * logs nothing. It has no option to change that, and its useErrorHandling plugin wraps only Yoga's
 * request handler, which already catches its own errors. Here such an error is answered 500 with
 * a JSON INTERNAL_SERVER_ERROR, and logged at error with its stack.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendNodeResponse } from '@whatwg-node/server';
import type { Logger } from '../lib/logger.js';
import type { GatewayYoga } from '../gateway/yoga.js';

const UNEXPECTED = JSON.stringify({ errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });

export function yogaListener(yoga: GatewayYoga, log: Logger): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const unexpected = () =>
    new yoga.fetchAPI.Response(UNEXPECTED, { status: 500, headers: { 'content-type': 'application/json; charset=utf-8' } });
  return async (request, response) => {
    let answer: Response;
    try {
      // The server context whatwg-node's listener gives: plugins read the Node request from it.
      answer = await yoga.handleNodeRequestAndResponse(request, response, { req: request, res: response });
    } catch (error) {
      log.error({ err: error }, 'unexpected error');
      answer = unexpected();
    }
    try {
      // As whatwg-node's listener sends it (one writeHead when it can).
      // Stryker disable next-line BooleanLiteral: the same status and headers reach the client, in one writeHead call or several
      await sendNodeResponse(answer, response, request, true);
    } catch (error) {
      log.error({ err: error }, 'response could not be sent');
      // Stryker disable next-line ConditionalExpression: sendNodeResponse ends a response last, so it never fails on one already ended
      if (!response.writableEnded) response.destroy();
    }
  };
}
