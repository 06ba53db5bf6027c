/**
 * The fenced blocks of README.md. Client examples carry a file name in their info string
 * (```ts title="apollo.ts"```): a test writes each to that name in a project folder and runs it.
 */
import { readFileSync } from 'node:fs';

export const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

export interface FencedBlock {
  readonly lang: string;
  /** The file name a block is printed as, or undefined. */
  readonly title: string | undefined;
  readonly body: string;
}

export function fencedBlocks(markdown: string = README): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  for (const match of markdown.matchAll(/^```(\w*)([^\n]*)\n([\s\S]*?)^```\s*$/gm)) {
    const title = /\btitle="([^"]+)"/.exec(match[2]!)?.[1];
    blocks.push({ lang: match[1]!, title, body: match[3]! });
  }
  return blocks;
}

/** The README's example files by name; fails on a name given twice. */
export function exampleFiles(markdown: string = README): Map<string, string> {
  const files = new Map<string, string>();
  for (const { title, body } of fencedBlocks(markdown)) {
    if (!title) continue;
    if (files.has(title)) throw new Error(`README.md prints two files named ${title}`);
    files.set(title, body);
  }
  return files;
}
