import { Writable } from 'node:stream';

/**
 * `zekt dev`'s log lines for a person at a terminal: `12:04:05  WARN   dispatcher  message  key=value`
 * (the time in UTC, like the timestamps the API answers).
 * pino still writes its JSON (after redaction, so secrets stay out); this stream only reformats
 * each line. `zekt serve` keeps the JSON lines a log collector parses.
 */
const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** pino's fields that the line shows in its own place, or that say nothing at a terminal. */
const SHOWN_APART = new Set(['level', 'time', 'msg', 'component', 'pid', 'hostname', 'err', 'v']);

/**
 * One pino JSON line as a readable line; anything that is not such a line is returned unchanged.
 * @example formatLogLine('{"level":40,"time":0,"component":"dispatcher","msg":"retrying","deliveryId":"d1"}')
 *   // → '00:00:00  WARN   dispatcher  retrying  deliveryId=d1'
 */
export function formatLogLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || typeof entry.level !== 'number') return line;
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 19) : '--:--:--';
  const level = (LEVELS[entry.level] ?? String(entry.level)).padEnd(5);
  const parts = [time, level];
  if (typeof entry.component === 'string') parts.push(entry.component);
  if (typeof entry.msg === 'string') parts.push(entry.msg);
  const fields = Object.entries(entry)
    .filter(([key]) => !SHOWN_APART.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  if (fields.length > 0) parts.push(fields.join(' '));
  const err = entry.err as { type?: string; message?: string; stack?: string } | undefined;
  const errorText = err
    ? `\n    ${(err.stack ?? `${err.type ?? 'Error'}: ${err.message ?? ''}`).replace(/\n/g, '\n    ')}`
    : '';
  return `${parts.join('  ')}${errorText}`;
}

/** A destination for pino that writes each line through `formatLogLine` to `out`. */
export function createReadableLogStream(out: NodeJS.WritableStream): Writable {
  let partial = '';
  return new Writable({
    write(chunk, _encoding, done) {
      const lines = (partial + String(chunk)).split('\n');
      partial = lines.pop() ?? '';
      if (lines.length > 0) out.write(`${lines.map(formatLogLine).join('\n')}\n`);
      done();
    },
    final(done) {
      if (partial) out.write(`${formatLogLine(partial)}\n`);
      done();
    },
  });
}
