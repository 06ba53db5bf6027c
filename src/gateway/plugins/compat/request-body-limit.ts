/**
 * MAX_REQUEST_BYTES, refused as graphql-yoga 5.24's `maxRequestBodySize` does, whose pipe copies every body into a request
 * an open subscription then holds. Node reads exactly the Content-Length it framed a body by; any other is read to the limit.
 */
import { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { refusal } from './coded-refusals.js';

const tooLarge = () => refusal('Request body too large', 413, 'REQUEST_ENTITY_TOO_LARGE');

function framedByContentLength(serverContext: unknown): boolean {
  const req = (serverContext as { req?: unknown }).req;
  return req instanceof IncomingMessage && req.headers['content-length'] !== undefined && req.headers['transfer-encoding'] === undefined;
}

/** Refused as soon as they pass `limit`, the rest left unread: cancelling would close the connection first. */
async function readUpTo(body: ReadableStream<Uint8Array>, limit: number): Promise<BodyInit> {
  const reader = body.getReader();
  // The client broke the body off: its mistake, as a truncated body is.
  const next = () => reader.read().catch((): never => {
    throw refusal('The request body ended before it was complete.');
  });
  const chunks: Uint8Array[] = [];
  let bytesRead = 0;
  try {
    for (let read = await next(); !read.done; read = await next()) {
      bytesRead += read.value.byteLength;
      if (bytesRead > limit) throw tooLarge();
      chunks.push(read.value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks) as unknown as BodyInit;
}

export function useRequestBodyLimit(limit: number): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, serverContext, fetchAPI }) {
      const announced = request.headers.get('content-length');
      if (announced !== null) {
        if (!/^\d+$/.test(announced)) throw refusal('Content-Length header is invalid.');
        if (Number(announced) > limit) throw tooLarge();
        if (framedByContentLength(serverContext)) return;
      }
      if (!requestParser || !request.body) return;
      const parse = requestParser;
      setRequestParser(async (unframed) => {
        const headers = new fetchAPI.Headers(unframed.headers);
        headers.delete('content-length');
        const body = await readUpTo(unframed.body!, limit);
        return parse(new fetchAPI.Request(unframed.url, { method: unframed.method, headers, signal: unframed.signal, body }));
      });
    },
  };
}
