import { parseArgs } from 'node:util';
import { formatInstructionCount, runInstructionCount } from './instruction-count.js';

// instruction-count.ts says what is counted and what is not.
const USAGE =
  'usage: npm run instructions -w bench -- [--events 200] [--warm-up 3000] [--database-url postgres://…] [--keep-dumps DIR]';

async function main(): Promise<void> {
  let values: { events?: string; 'warm-up'?: string; 'database-url'?: string; 'keep-dumps'?: string };
  try {
    ({ values } = parseArgs({
      options: {
        events: { type: 'string' },
        'warm-up': { type: 'string' },
        'database-url': { type: 'string' },
        'keep-dumps': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${USAGE}`);
  }
  const count = (name: 'events' | 'warm-up', fallback: number) => {
    const value = values[name] === undefined ? fallback : Number(values[name]);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`--${name} must be a positive integer\n${USAGE}`);
    return value;
  };
  const result = await runInstructionCount({
    events: count('events', 200),
    warmUp: count('warm-up', 3000),
    databaseUrl: values['database-url'],
    keepDumpsIn: values['keep-dumps'],
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${formatInstructionCount(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
});
