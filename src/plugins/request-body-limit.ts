/**
 * MAX_REQUEST_BYTES, as Yoga's `maxRequestBodySize` enforces it (the same refusals: 413 by the
 * announced length, 400 for a malformed one, 413 once the bytes read pass the limit), without
 * its per-request cost where it buys nothing. Yoga pipes every body through a counting stream and
 * builds a second Request around it. A body that Node's HTTP server frames by its Content-Length
 * cannot be longer than that length (the parser reads exactly that many bytes, and refuses a
 * request that also sends Transfer-Encoding), so once the length is checked, counting again is
 * left out; a chunked body, or one handed over by anything but Node's HTTP server, is still
 * counted while it is read.
 */
import { IncomingMessage } from 'node:http';
import { createGraphQLError, type FetchAPI, type Plugin } from 'graphql-yoga';

const CONTENT_LENGTH = /^\d+$/;

const tooLarge = () =>
  createGraphQLError('Request body too large', {
    extensions: { http: { status: 413 }, code: 'REQUEST_ENTITY_TOO_LARGE' },
  });

const invalidLength = () =>
  createGraphQLError('Content-Length header is invalid.', {
    extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
  });

/** Whether Node's HTTP parser framed this request's body by the Content-Length it announced. */
function framedByContentLength(serverContext: unknown): boolean {
  const req = (serverContext as { req?: unknown } | undefined)?.req;
  return (
    req instanceof IncomingMessage &&
    req.headers['content-length'] !== undefined &&
    req.headers['transfer-encoding'] === undefined
  );
}

/** The request with a body that fails once more than `limit` bytes have been read from it. */
function countedWhileRead(request: Request, limit: number, fetchAPI: FetchAPI): Request {
  const body = request.body;
  if (!body) return request;
  // A native stream must go through a native TransformStream, a ponyfill one through the ponyfill's.
  const TransformStreamCtor: typeof TransformStream =
    body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
  let bytesRead = 0;
  const counted = body.pipeThrough(
    new TransformStreamCtor<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytesRead += chunk.byteLength;
        if (bytesRead > limit) {
          controller.error(tooLarge());
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new fetchAPI.Request(request.url, {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    body: counted,
    duplex: 'half',
  } as RequestInit);
}

/** Goes after every plugin that may choose a request parser: it wraps the one chosen. */
export function useRequestBodyLimit(limit: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, serverContext, fetchAPI }) {
      const announced = request.headers.get('content-length');
      if (announced !== null) {
        if (!CONTENT_LENGTH.test(announced)) throw invalidLength();
        if (Number(announced) > limit) throw tooLarge();
        if (framedByContentLength(serverContext)) return;
      }
      if (!requestParser || !request.body) return;
      const parse = requestParser;
      setRequestParser((req) => parse(countedWhileRead(req, limit, fetchAPI)));
    },
  };
}
