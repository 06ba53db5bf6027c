/** Yoga as Node's request listener; an error escaping Yoga is answered as JSON, not as whatwg-node's text stack. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendNodeResponse } from '@whatwg-node/server';
import type { Logger } from '../../lib/logger.js';
import type { GatewayYoga } from '../../gateway/yoga.js';
import { errorBody } from '../client-error.js';

const UNEXPECTED = errorBody('Unexpected error.', 'INTERNAL_SERVER_ERROR');

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
      // One that failed has not ended: cut it, for the client to see.
      log.error({ err: error }, 'response could not be sent');
      response.destroy();
    }
  };
}
