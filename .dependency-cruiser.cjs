/** Import rules checked in CI (`npm run lint:deps`): data flows one way, between files and between folders. */
const GRAPHQL = '(^|/)node_modules/(graphql|graphql-yoga|graphql-jit|graphql-ws|@graphql-yoga|@pothos|@envelop|@escape\\.tech/graphql-armor|@apollo/subgraph)/';

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
      name: 'upstream-without-graphql',
      comment: 'The upstream layer speaks REST and knows nothing of GraphQL.',
      severity: 'error',
      from: { path: '^src/upstream/' },
      to: { path: GRAPHQL },
    },
    {
      name: 'no-unresolvable',
      comment: 'Every import names a file or package that exists.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
