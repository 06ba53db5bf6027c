/**
 * Reads an incremental (multipart/mixed) GraphQL response part by part, as they arrive: what a
 * hand-written @stream consumer does without a client library.
 */
export interface IncrementalPart {
  data?: any;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  incremental?: { items?: unknown[]; data?: any; path: (string | number)[]; errors?: IncrementalPart['errors'] }[];
  hasNext?: boolean;
}

export async function* multipartParts(response: Response): AsyncGenerator<IncrementalPart> {
  const type = response.headers.get('content-type') ?? '';
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (!type.startsWith('multipart/mixed') || !boundary || !response.body) {
    throw new Error(`not a multipart response: ${response.status} ${type}`);
  }
  const delimiter = `\r\n--${boundary}`;
  const decoder = new TextDecoder();
  // The body starts with the delimiter itself (without the leading CRLF).
  let buffer = '\r\n';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf(delimiter, 1); end !== -1; end = buffer.indexOf(delimiter, 1)) {
      const part = buffer.slice(0, end);
      buffer = buffer.slice(end);
      const json = part.slice(part.indexOf('\r\n\r\n') + 4).trim();
      if (json.startsWith('{')) yield JSON.parse(json) as IncrementalPart;
    }
  }
}
