// Writes a .br and a .gz twin beside each text file of the built console, once, at build time:
// the server (@fastify/static with preCompressed) then sends the twin a browser accepts, and never
// compresses per request.
//
//   node ../../scripts/compress-console.mjs dist/console
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const TEXT = new Set(['.js', '.css', '.html', '.svg', '.json']);

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: compress-console.mjs <directory>\n');
  process.exit(2);
}

function files(path) {
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(path, entry.name)) : [join(path, entry.name)],
  );
}

for (const file of files(dir)) {
  if (!TEXT.has(extname(file))) continue;
  const body = readFileSync(file);
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: statSync(file).size,
      },
    }),
  );
}
