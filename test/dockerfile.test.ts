/** No Docker engine runs here: check what can be checked of the image definition without one. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
const scripts = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;
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
