/** A file for the running test only: written to a fresh temporary folder, removed when the test ends. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

export function testFile(name: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, name);
  writeFileSync(file, content);
  return file;
}
