import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app-context.js';
import { HttpError } from '../problem.js';

/**
 * The built console: apps/console/dist in the repository (from this module in src/ or dist/ alike),
 * else console/ beside dist/ in the npm package, where packing copies it (scripts/pack-server.mjs).
 */
const REPOSITORY_CONSOLE_DIR = fileURLToPath(new URL('../../../../console/dist/', import.meta.url));
const PACKAGED_CONSOLE_DIR = fileURLToPath(new URL('../../../console/', import.meta.url));
export const DEFAULT_CONSOLE_DIR =
  !existsSync(join(REPOSITORY_CONSOLE_DIR, 'index.html')) &&
  existsSync(join(PACKAGED_CONSOLE_DIR, 'index.html'))
    ? PACKAGED_CONSOLE_DIR
    : REPOSITORY_CONSOLE_DIR;

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Paths that are never console pages: an unknown one there is an API 404, not the page. */
const NOT_PAGES = /^\/(api|auth|webhooks|console)(\/|$)|^\/(healthz|readyz)$/;

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer | null;
}

/** Reads the built console once: its page, and the files Vite wrote under console/ (hashed names). */
function loadConsole(dir: string): { page: Buffer; assets: Map<string, Asset> } | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  const assetDir = join(dir, 'console');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(assetDir, name));
    // Compressed once here, not per request; images and fonts are compressed already.
    const gzipped = type.startsWith('text/') ? gzipSync(body) : null;
    assets.set(name, { type, body, gzipped });
  }
  return { page: readFileSync(join(dir, 'index.html')), assets };
}

/**
 * Serves the console: its page for `/` and every other GET a browser navigates to (the console
 * routes by path, so deep links survive a reload), and its files under /console/. Vite names the
 * files by their content, so they are cached for good; the page is revalidated on every visit.
 *
 * The headers make the page hard to misuse: scripts and styles only from Zekt itself (CSP, nothing
 * inline), never framed, no MIME sniffing, no referrer to other sites.
 */
export function registerConsoleRoutes(
  app: App,
  options: { consoleDir?: string; githubWebUrl: string },
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const built = loadConsole(options.consoleDir ?? DEFAULT_CONSOLE_DIR);
  const secure = (reply: FastifyReply) =>
    reply
      .header(
        'content-security-policy',
        `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self' ${options.githubWebUrl}; frame-ancestors 'none'; base-uri 'none'; object-src 'none'`,
      )
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'same-origin');
  const notBuilt = () =>
    new HttpError('console_not_built', 'the console is not built: run `npm run build` (npm start does)');

  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    if (!built) throw notBuilt();
    return secure(reply)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(built.page);
  };

  app.get('/', { schema: { hide: true } }, page);
  app.get('/console/:asset', { schema: { hide: true } }, async (request, reply) => {
    const { asset } = request.params as { asset: string };
    if (!built) throw notBuilt();
    const file = built.assets.get(asset);
    if (!file) throw new HttpError('route_not_found', `no console file ${asset}`);
    secure(reply)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('vary', 'accept-encoding');
    if (file.gzipped && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
      return reply.header('content-encoding', 'gzip').type(file.type).send(file.gzipped);
    }
    return reply.type(file.type).send(file.body);
  });
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const wantsPage = (request.headers.accept ?? '').includes('text/html');
    if (NOT_PAGES.test(path) || !wantsPage) {
      throw new HttpError('route_not_found', `no route for GET ${path}`);
    }
    return page(request, reply);
  });
  // Pages other routes serve too (/setup, before or after its code).
  return page;
}
