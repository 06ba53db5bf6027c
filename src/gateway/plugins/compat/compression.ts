/**
 * Answers over 1 KB as br or gzip. @whatwg-node/server 0.11's useContentEncoding ignores q-values,
 * compresses streamed answers (holding back incremental parts) and inflates request bodies past the limit.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';

type Encoding = 'br' | 'gzip';

const MIN_BYTES = 1024;
/** Single answers only: multipart/mixed and event streams must leave chunk by chunk. */
const COMPRESSIBLE = /^(application\/(graphql-response\+)?json|text\/(html|plain|css|javascript)|application\/javascript)\b/i;
const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export function preferredEncoding(acceptEncoding: string | null): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  let best: { encoding: Encoding; q: number } | undefined;
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!(q > 0)) continue;
    const candidates: Encoding[] = name === '*' ? ['br', 'gzip'] : name === 'br' || name === 'gzip' ? [name] : [];
    for (const encoding of candidates) {
      // br wins a tie: smaller for JSON at a similar cost.
      if (!best || q > best.q || (q === best.q && encoding === 'br' && best.encoding !== 'br')) best = { encoding, q };
    }
  }
  return best?.encoding;
}

/** Fast settings: these run once per response, on the thread pool. */
export async function compress(body: Uint8Array, encoding: Encoding): Promise<Uint8Array<ArrayBuffer>> {
  const compressed = await (encoding === 'br'
    ? brotli(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength },
      })
    : gzipAsync(body, { level: 6 }));
  return new Uint8Array(compressed.buffer as ArrayBuffer, compressed.byteOffset, compressed.byteLength);
}

export function useResponseCompression(): Plugin {
  return {
    onResponse({ request, response, setResponse, fetchAPI }) {
      const encoding = preferredEncoding(request.headers.get('accept-encoding'));
      if (!encoding || !response.body || response.headers.has('content-encoding')) return;
      if (!COMPRESSIBLE.test(response.headers.get('content-type') ?? '')) return;
      const length = Number(response.headers.get('content-length') ?? Number.NaN);
      if (length < MIN_BYTES) return;
      return (async () => {
        const body = new Uint8Array(await response.arrayBuffer());
        const headers = new fetchAPI.Headers(response.headers);
        headers.append('vary', 'accept-encoding');
        const init = { status: response.status, statusText: response.statusText, headers };
        if (body.byteLength < MIN_BYTES) return setResponse(new fetchAPI.Response(body, init));
        const compressed = await compress(body, encoding);
        headers.set('content-encoding', encoding);
        headers.set('content-length', String(compressed.byteLength));
        setResponse(new fetchAPI.Response(compressed, init));
      })();
    },
  };
}
