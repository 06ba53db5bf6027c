/** A `fetch` for client libraries that sends every request to a test gateway, in-process. */
import type { TestGateway } from '../helpers/gateway.js';

export const GATEWAY_URL = 'http://gateway.test/graphql';

export interface RecordedRequest {
  readonly body: unknown;
  readonly status: number;
}

/** Every request the client made, with its parsed JSON body and the answer's status. */
export function gatewayFetch(gw: TestGateway, recorded: RecordedRequest[] = []): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const text = request.method === 'POST' ? await request.clone().text() : '';
    const response = await gw.yoga.fetch(request);
    recorded.push({ body: text ? JSON.parse(text) : null, status: response.status });
    return response;
  };
}
