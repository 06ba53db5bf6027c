/**
 * GraphiQL without a CDN: a small page loading @graphql-yoga/render-graphiql's bundle as immutable assets named by
 * their hash, compressed once. graphql-yoga 5.24's `graphiql` loads a CDN, or inlines the bundle in every page.
 */
import { createHash } from 'node:crypto';
import type { FetchAPI, Plugin } from 'graphql-yoga';
import type { ExampleOperation } from '../../examples/index.js';
import { compress, preferredEncoding } from './compression.js';

type GraphiQLPageOptions = { examples: readonly ExampleOperation[]; introspection: boolean; withApiKey: boolean };

const TITLE = 'Identity & content library gateway';
const ENDPOINT = '/graphql';
const ASSET_PREFIX = '/graphiql/';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const JS = 'application/javascript; charset=utf-8';

type Asset = Awaited<ReturnType<typeof asset>>;

async function asset(name: string, type: string, content: string | Uint8Array) {
  const identity = new Uint8Array(typeof content === 'string' ? Buffer.from(content) : content);
  const [br, gzip] = await Promise.all([compress(identity, 'br'), compress(identity, 'gzip')]);
  const hash = createHash('sha256').update(identity).digest('base64url').slice(0, 16);
  return { url: ASSET_PREFIX + name.replace('*', hash), type, etag: `"${hash}"`, bodies: { identity, br, gzip } };
}

/** `<` escaped, so the text cannot close its <script>. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

async function compressAssets() {
  const graphiql = await import('@graphql-yoga/render-graphiql/graphiql');
  const favicon = Buffer.from(graphiql.favicon.replace(/^data:[^,]*,/, ''), 'base64');
  return Promise.all([
    asset('graphiql.*.js', JS, graphiql.js),
    asset('graphiql.*.css', 'text/css; charset=utf-8', graphiql.css),
    asset('favicon.*.ico', 'image/x-icon', favicon),
    asset('editor.worker.*.js', JS, graphiql.editorWorkerService),
    asset('json.worker.*.js', JS, graphiql.jsonWorker),
    asset('graphql.worker.*.js', JS, graphiql.graphqlWorker),
  ]);
}

// The same for every gateway in the process: compressed once, on the first page served.
let sharedAssets: ReturnType<typeof compressAssets> | undefined;

async function buildBundle(options: GraphiQLPageOptions) {
  const assets = await (sharedAssets ??= compressAssets());
  const [js, css, icon, editorWorkerService, json, graphql] = assets.map((a) => a.url);
  const workers = { editorWorkerService, json, graphql };
  const headers = options.withApiKey ? JSON.stringify({ 'x-api-key': '<your key>' }, null, 2) : null;
  const props = {
    title: TITLE,
    endpoint: ENDPOINT,
    defaultTabs: options.examples.map((op) => ({
      query: op.query,
      variables: op.variables ? JSON.stringify(op.variables, null, 2) : null,
      headers,
    })),
    // On every request, a subscription's GET included: CSRF prevention refuses a GET without it.
    // Another site's page that sets it is still stopped by the CORS preflight it triggers.
    additionalHeaders: { 'x-graphql-yoga-csrf': 'graphiql' },
    // Without introspection GraphiQL would show the refusal; it runs operations without docs instead.
    ...(options.introspection ? {} : { schema: null }),
  };
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(TITLE)}</title>
    <link rel="icon" href="${icon}" />
    <link rel="stylesheet" href="${css}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run GraphiQL.</noscript>
    <div id="root"></div>
    <script>
      const workers = ${scriptJson(workers)};
      self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => workers[label] };
    </script>
    <script src="${js}"></script>
    <script>
      YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${scriptJson(props)});
    </script>
  </body>
</html>
`;
  return { page: await asset('', 'text/html; charset=utf-8', html), assets: new Map(assets.map((a) => [a.url, a])) };
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
const acceptsHtml = (request: Request) => (request.headers.get('accept') ?? '').includes('text/html');

export function useGraphiQL(options: GraphiQLPageOptions): Plugin {
  // Built on first use: most processes never serve a page.
  let bundle: ReturnType<typeof buildBundle> | undefined;
  const loaded = () => (bundle ??= buildBundle(options));
  return {
    onRequest({ request, url, fetchAPI, endResponse }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (url.pathname === '/') {
        const html = acceptsHtml(request);
        const type = html ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
        return endResponse(new fetchAPI.Response(html ? ROOT_HTML : ROOT_TEXT, { headers: { 'content-type': type } }));
      }
      const atEndpoint = request.method === 'GET' && (url.pathname === ENDPOINT || url.pathname === `${ENDPOINT}/`);
      if (atEndpoint && !url.searchParams.has('query') && acceptsHtml(request)) {
        return loaded().then(({ page }) => endResponse(respond(request, page, 'no-cache', fetchAPI)));
      }
      if (url.pathname.startsWith(ASSET_PREFIX)) {
        return loaded().then(({ assets }) => {
          const found = assets.get(url.pathname);
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
