/**
 * Yoga as Node's request listener, as `yoga(request, response)` is, but for an error that escapes
 * Yoga's own handling (a plugin's onRequest or onResponse hook): @whatwg-node/server 0.11's listener
 * answers it 500 with the error's stack as text/plain and logs nothing, with no option to change
 * that. Here it is answered 500 with a JSON INTERNAL_SERVER_ERROR and logged at error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendNodeResponse } from '@whatwg-node/server';
import type { Logger } from '../../lib/logger.js';
import type { GatewayYoga } from '../../gateway/yoga.js';

const UNEXPECTED = JSON.stringify({ errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });

export function yogaListener(yoga: GatewayYoga, log: Logger): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    let answer: Response;
    try {
      // The server context whatwg-node's listener gives: plugins read the Node request from it.
      answer = await yoga.handleNodeRequestAndResponse(request, response, { req: request, res: response });
    } catch (error) {
      log.error({ err: error }, 'unexpected error');
      answer = new yoga.fetchAPI.Response(UNEXPECTED, { status: 500, headers: { 'content-type': 'application/json; charset=utf-8' } });
    }
    try {
      // As whatwg-node's listener sends it: one writeHead when it can.
      await sendNodeResponse(answer, response, request, true);
    } catch (error) {
      // sendNodeResponse ends a response last, so one that failed has not ended: cut it, for the client to see.
      log.error({ err: error }, 'response could not be sent');
      response.destroy();
    }
  };
}
