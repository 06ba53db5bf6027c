/**
 * Import rules checked in CI (`npm run lint:deps`): data flows one way, between files, between
 * folders and between layers (docs/architecture.md).
 */
const GRAPHQL = '(^|/)node_modules/(graphql|graphql-yoga|graphql-jit|graphql-ws|@graphql-yoga|@pothos|@envelop|@escape\\.tech/graphql-armor|@apollo/subgraph)/';

/** A layer that may not import another. */
const never = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } });

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A file never imports, directly or through others, a file that imports it.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'A folder never depends, directly or through others, on a folder that depends on it.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      comment: 'Every import names a file or package that exists.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    never('upstream-without-graphql', 'The upstream layer speaks REST and knows nothing of GraphQL.', '^src/upstream/', GRAPHQL),
    never('upstream-is-the-bottom', 'The upstream layer is called, it calls no layer above it.', '^src/upstream/', '^src/(server|gateway|audit)/'),
    never('audit-not-gateway', 'The audit domain (paging, live) is used by the gateway and never uses it, nor the server.', '^src/audit/', '^src/(gateway|server)/'),
    never('audit-without-graphql', 'The audit domain is plain code: cursors, windows, plans, the live hub.', '^src/audit/', GRAPHQL),
    never('schema-not-server', 'Resolvers never touch the HTTP server or the WebSocket transport.', '^src/gateway/schema/', '^src/server/'),
    never('gateway-not-server', 'The gateway (Yoga) never listens: the server hosts it, not the reverse.', '^src/gateway/', '^src/server/'),
    never('lib-is-shared', 'src/lib/ is shared by every layer and imports none of them.', '^src/lib/', '^src/(server|gateway|audit|upstream)/'),
    never('simulator-stands-alone', 'The simulator is reached over HTTP, as a real upstream is: it imports nothing of the gateway.', '^simulator/', '^src/'),
    {
      name: 'simulator-only-for-demo',
      comment: 'Only demo mode loads the simulator, as #simulator, built on its own.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/demo\\.ts$' },
      to: { path: '^simulator/' },
    },
    never('production-without-tests', 'Production code never imports tests or the bench.', '^(src|simulator)/', '^(test|bench)/'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
