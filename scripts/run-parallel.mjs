#!/usr/bin/env node
// Runs the npm scripts named on the command line side by side and exits 1 if any failed. Each
// script's output is printed whole when it ends, so the outputs never interleave. `npm test` checks
// types and lints this way: the checks are independent, and one after another they kept a core idle.
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
const codes = await Promise.all(
  names.map(
    (name) =>
      new Promise((resolve) => {
        const child = spawn('npm', ['run', name], { stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
        child.on('error', (error) => {
          output.push(Buffer.from(`${error.message}\n`));
          resolve(1);
        });
        child.on('close', (code) => {
          process.stdout.write(Buffer.concat(output));
          if (code !== 0) process.stdout.write(`\nnpm run ${name} failed (exit ${code})\n`);
          resolve(code ?? 1);
        });
      }),
  ),
);
process.exit(codes.every((code) => code === 0) ? 0 : 1);
