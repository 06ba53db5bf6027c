/**
 * GraphiQL without a CDN and at next to no CPU per view: `GET /graphql` (asking for HTML) answers
 * a page of a few KB that loads Yoga's GraphiQL bundle as separate assets under /graphiql/, named
 * by the hash of their content, cacheable for a year (immutable) and compressed once (br, gzip).
 * The bundle (about 9 MB) is read, hashed and compressed on the first view, on the thread pool,
 * and kept; later views cost a header comparison. `/` points to /graphql.
 */
import { createHash } from 'node:crypto';
import type { FetchAPI, Plugin } from 'graphql-yoga';
import { compress, preferredEncoding, type Encoding } from './compression.js';

export interface GraphiQLTab {
  readonly query: string;
  readonly variables?: string | null;
  readonly headers?: string | null;
}

export interface GraphiQLPageOptions {
  readonly title: string;
  readonly endpoint: string;
  readonly defaultTabs: readonly GraphiQLTab[];
  /** false: GraphiQL does not introspect (the gateway would refuse it). */
  readonly introspection: boolean;
}

interface Asset {
  readonly type: string;
  readonly etag: string;
  readonly bodies: Readonly<Record<Encoding | 'identity', Uint8Array<ArrayBuffer>>>;
}

interface Bundle {
  readonly page: Asset;
  readonly assets: ReadonlyMap<string, Asset>;
}

const ASSET_PREFIX = '/graphiql/';
const IMMUTABLE = 'public, max-age=31536000, immutable';

const hashOf = (body: Uint8Array) => createHash('sha256').update(body).digest('base64url').slice(0, 16);

async function asset(type: string, text: string | Uint8Array): Promise<Asset & { hash: string }> {
  const identity = new Uint8Array(typeof text === 'string' ? Buffer.from(text) : text);
  const [br, gzip] = await Promise.all([compress(identity, 'br'), compress(identity, 'gzip')]);
  const hash = hashOf(identity);
  return { type, hash, etag: `"${hash}"`, bodies: { identity, br, gzip } };
}

/** JSON inside a <script> element: `<` escaped so the text cannot close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

async function buildBundle(options: GraphiQLPageOptions): Promise<Bundle> {
  const graphiql = await import('@graphql-yoga/render-graphiql/graphiql');
  const [js, css, editorWorker, jsonWorker, graphqlWorker] = await Promise.all([
    asset('application/javascript; charset=utf-8', graphiql.js),
    asset('text/css; charset=utf-8', graphiql.css),
    asset('application/javascript; charset=utf-8', graphiql.editorWorkerService),
    asset('application/javascript; charset=utf-8', graphiql.jsonWorker),
    asset('application/javascript; charset=utf-8', graphiql.graphqlWorker),
  ]);
  const favicon = await asset('image/x-icon', Buffer.from(graphiql.favicon.replace(/^data:[^,]*,/, ''), 'base64'));
  const named = new Map<string, Asset & { hash: string }>([
    [`graphiql.${js.hash}.js`, js],
    [`graphiql.${css.hash}.css`, css],
    [`editor.worker.${editorWorker.hash}.js`, editorWorker],
    [`json.worker.${jsonWorker.hash}.js`, jsonWorker],
    [`graphql.worker.${graphqlWorker.hash}.js`, graphqlWorker],
    [`favicon.${favicon.hash}.ico`, favicon],
  ]);
  const url = (a: { hash: string }) => ASSET_PREFIX + [...named].find(([, v]) => v === a)![0];
  const workers = { editorWorkerService: url(editorWorker), json: url(jsonWorker), graphql: url(graphqlWorker) };
  const props = {
    title: options.title,
    endpoint: options.endpoint,
    defaultTabs: options.defaultTabs,
    // On every request, the GET of a subscription's event stream included: useCSRFPrevention
    // (src/gateway/yoga.ts) refuses a GET without one of its headers. This page is same-origin; another
    // site's page that sets the header is still stopped by the CORS preflight it triggers.
    additionalHeaders: { 'x-graphql-yoga-csrf': 'graphiql' },
    // Without introspection GraphiQL would ask for the schema and show its refusal; it then
    // runs operations without docs or autocomplete.
    ...(options.introspection ? {} : { schema: null }),
  };
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(options.title)}</title>
    <link rel="icon" href="${url(favicon)}" />
    <link rel="stylesheet" href="${url(css)}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run GraphiQL.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${scriptJson(workers)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => workers[label] };
    </script>
    <script src="${url(js)}"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${scriptJson(props)});
    </script>
  </body>
</html>
`;
  return { page: await asset('text/html; charset=utf-8', html), assets: named };
}

function wantsGraphiQL(request: Request, url: URL, endpoint: string): boolean {
  return (
    request.method === 'GET' &&
    (url.pathname === endpoint || url.pathname === `${endpoint}/`) &&
    !url.searchParams.has('query') &&
    (request.headers.get('accept') ?? '').includes('text/html')
  );
}

function respond(request: Request, asset: Asset, cacheControl: string, fetchAPI: FetchAPI): Response {
  const headers: Record<string, string> = { etag: asset.etag, 'cache-control': cacheControl, vary: 'accept-encoding' };
  if (request.headers.get('if-none-match')?.split(',').some((tag) => tag.trim() === asset.etag)) {
    return new fetchAPI.Response(null, { status: 304, headers });
  }
  const encoding = preferredEncoding(request.headers.get('accept-encoding'));
  const body = asset.bodies[encoding ?? 'identity'];
  if (encoding) headers['content-encoding'] = encoding;
  headers['content-type'] = asset.type;
  headers['content-length'] = String(body.byteLength);
  return new fetchAPI.Response(body, { status: 200, headers });
}

const ROOT_HTML = '<!doctype html><title>GraphQL gateway</title><p>GraphQL and GraphiQL are at <a href="/graphql">/graphql</a>.</p>\n';
const ROOT_TEXT = 'GraphQL and GraphiQL are at /graphql (POST operations there; open it in a browser for GraphiQL).\n';

export function useGraphiQL(options: GraphiQLPageOptions): Plugin {
  let bundle: Promise<Bundle> | undefined;
  const loaded = () => {
    bundle ??= buildBundle(options).catch((error: unknown) => {
      bundle = undefined;
      throw error;
    });
    return bundle;
  };
  return {
    // Synchronous for every other request: a GraphQL POST pays no promise here.
    onRequest({ request, url, fetchAPI, endResponse }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (url.pathname === '/') {
        const html = (request.headers.get('accept') ?? '').includes('text/html');
        endResponse(
          new fetchAPI.Response(html ? ROOT_HTML : ROOT_TEXT, {
            headers: { 'content-type': html ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8' },
          }),
        );
        return;
      }
      if (wantsGraphiQL(request, url, options.endpoint)) {
        return loaded().then(({ page }) => endResponse(respond(request, page, 'no-cache', fetchAPI)));
      }
      if (url.pathname.startsWith(ASSET_PREFIX)) {
        return loaded().then(({ assets }) => {
          const found = assets.get(url.pathname.slice(ASSET_PREFIX.length));
          endResponse(
            found
              ? respond(request, found, IMMUTABLE, fetchAPI)
              : new fetchAPI.Response('Not found\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } }),
          );
        });
      }
    },
  };
}
