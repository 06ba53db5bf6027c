/** The smallest source map reader profile-top.ts needs: generated line/column -> source file:line. */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

interface Segment {
  readonly column: number;
  readonly source: number;
  readonly line: number;
}

interface DecodedMap {
  readonly sources: string[];
  /** Per generated line (0-based), its segments by ascending column. */
  readonly lines: Segment[][];
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const cache = new Map<string, DecodedMap>();

/** Base64 VLQ fields of one segment. */
function vlq(text: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = BASE64.indexOf(char);
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return values;
}

function decode(mapFile: string): DecodedMap {
  const raw = JSON.parse(readFileSync(mapFile, 'utf8')) as { sources: string[]; sourceRoot?: string; mappings: string };
  const base = resolve(dirname(mapFile), raw.sourceRoot ?? '');
  let source = 0;
  let line = 0;
  const lines = raw.mappings.split(';').map((text) => {
    let column = 0;
    const segments: Segment[] = [];
    for (const part of text.split(',')) {
      if (!part) continue;
      const [dColumn = 0, dSource, dLine] = vlq(part);
      column += dColumn;
      if (dSource === undefined || dLine === undefined) continue;
      source += dSource;
      line += dLine;
      segments.push({ column, source, line });
    }
    return segments;
  });
  return { sources: raw.sources.map((s) => resolve(base, s)), lines };
}

/** 0-based generated position -> source path and 1-based line; undefined when unmapped. */
export function originalPosition(mapFile: string, line: number, column: number): { source: string; line: number } | undefined {
  let map = cache.get(mapFile);
  if (!map) cache.set(mapFile, (map = decode(mapFile)));
  const segments = map.lines[line];
  if (!segments?.length) return undefined;
  let best = segments[0]!;
  for (const segment of segments) if (segment.column <= column) best = segment;
  const source = map.sources[best.source];
  return source === undefined ? undefined : { source, line: best.line + 1 };
}
