/** A pino destination that keeps every line in memory, for tests that read the logs. */
import { Writable } from 'node:stream';

export class MemoryLog extends Writable {
  readonly chunks: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void) {
    this.chunks.push(chunk.toString());
    done();
  }
  text() {
    return this.chunks.join('');
  }
  lines(): Record<string, any>[] {
    return this.text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, any>);
  }
}
