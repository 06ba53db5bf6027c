/**
 * The production build (`npm run build`): src/main.ts and every package it imports, bundled by
 * esbuild into dist/, one file for the start-up path and one per part loaded on demand (GraphiQL,
 * tracing). Whitespace is minified, names are kept. Demo mode's simulator is not part of the
 * gateway: it is built on its own into dist/simulator.js, which demo mode imports as `#simulator`
 * (package.json "imports" maps that name to its source, dist/package.json to the built file).
 *
 * Why a bundle: one module instead of many hundreds, and less source text, which V8 keeps in the
 * heap: the gateway starts smaller and peaks lower under large pages. It also needs no node_modules
 * at run time.
 *
 * dist/ runs on its own: its package.json makes the files ES modules, and
 * dist/THIRD_PARTY_LICENSES.txt carries the license of every package in the bundle.
 * `npm run typecheck` checks the types; esbuild only strips them, as tsx does for `npm start`.
 *
 * Usage: node build.mjs [--root=<dir with src/>] [--outdir=<dir>]
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { build } from 'esbuild';

const option = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const root = resolve(option('root', '.'));
const outdir = resolve(option('outdir', 'dist'));

const SIMULATOR = '#simulator';
const simulatorEntry = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).imports[SIMULATOR];

rmSync(outdir, { recursive: true, force: true });
/** What the gateway's bundle and the simulator's share. */
const bundleOptions = {
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  sourcemap: true,
  // Positions are what a stack trace needs; the sources are in the repository.
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
};

const { metafile } = await build({
  ...bundleOptions,
  entryPoints: { index: join(root, 'src/main.ts') },
  external: [SIMULATOR],
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS packages call require() for Node's built-in modules; an ES module has none of its own.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});

const simulator = await build({ ...bundleOptions, entryPoints: { simulator: join(root, simulatorEntry) } });

// The GraphiQL examples read their .graphql documents from beside the module: beside its output file here.
const EXAMPLES = 'src/gateway/examples';
const examplesOutput = Object.entries(metafile.outputs).find(([, out]) => Object.keys(out.inputs).some((input) => input.endsWith(`${EXAMPLES}/index.ts`)));
if (!examplesOutput) throw new Error(`no output holds ${EXAMPLES}/index.ts`);
for (const file of readdirSync(join(root, EXAMPLES)).filter((name) => name.endsWith('.graphql'))) {
  copyFileSync(join(root, EXAMPLES, file), join(dirname(resolve(examplesOutput[0])), file));
}

/** The directory of the package a bundled file belongs to (the innermost node_modules entry). */
function packageDir(file) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match ? resolve(match[1]) : undefined;
}

const inputs = [...Object.keys(metafile.inputs), ...Object.keys(simulator.metafile.inputs)];
const packages = new Set(inputs.map(packageDir).filter((dir) => dir !== undefined));
const notices = [...packages]
  .map((dir) => {
    const { name, version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((entry) => /^(licen[cs]e|copying)(\.|$)/i.test(entry));
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `License: ${typeof license === 'string' ? license : 'see the package'}`;
    return { id: `${name}@${version}`, text };
  })
  .sort((a, b) => a.id.localeCompare(b.id));
const distPackage = { type: 'module', private: true, imports: { [SIMULATOR]: './simulator.js' } };
writeFileSync(join(outdir, 'package.json'), `${JSON.stringify(distPackage, null, 2)}\n`);
writeFileSync(
  join(outdir, 'THIRD_PARTY_LICENSES.txt'),
  notices.map(({ id, text }) => `${id}\n${'-'.repeat(id.length)}\n${text}\n`).join('\n'),
);
for (const file of ['index.js', 'simulator.js']) {
  if (!existsSync(join(outdir, file))) throw new Error(`no ${join(outdir, file)} was written`);
}
console.log(`${relativeTo(outdir)}: the gateway and ${packages.size} packages`);

function relativeTo(dir) {
  return dir.startsWith(process.cwd()) ? dir.slice(process.cwd().length + 1) || '.' : dir;
}
