import { Writable } from 'node:stream';

/** A writable stream that keeps every log line, so a test can assert on what was (or was not) logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }

  get text(): string {
    return this.lines.join('\n');
  }

  json(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}
