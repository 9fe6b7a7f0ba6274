import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
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

/** Paths that are never console pages: an unknown one there is an API 404, not the page. */
const NOT_PAGES = /^\/(api|auth|webhooks|console)(\/|$)|^\/(healthz|readyz)$/;

/** A year: Vite names the console's files by their content, so a file never changes under its name. */
const ASSET_MAX_AGE_MS = 365 * 24 * 3600 * 1000;

/**
 * Serves the console: its page for `/` and every other GET a browser navigates to (the console
 * routes by path, so deep links survive a reload), and its files under /console/ (@fastify/static,
 * which sends the `.br` or `.gz` twin the console build wrote when the browser accepts it). Vite
 * names the files by their content, so they are cached for good; the page is revalidated on every
 * visit.
 *
 * The headers make the page hard to misuse: scripts and styles only from Zekt itself (CSP, nothing
 * inline), never framed, no MIME sniffing, no referrer to other sites.
 */
export async function registerConsoleRoutes(
  app: App,
  options: { consoleDir?: string; githubWebUrl: string },
): Promise<(request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>> {
  const dir = options.consoleDir ?? DEFAULT_CONSOLE_DIR;
  // Read once: the page is small and every navigation asks for it.
  const builtPage = existsSync(join(dir, 'index.html')) ? readFileSync(join(dir, 'index.html')) : null;
  const securityHeaders: Array<[name: string, value: string]> = [
    [
      'content-security-policy',
      `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self' ${options.githubWebUrl}; frame-ancestors 'none'; base-uri 'none'; object-src 'none'`,
    ],
    ['x-content-type-options', 'nosniff'],
    ['x-frame-options', 'DENY'],
    ['referrer-policy', 'same-origin'],
  ];
  const secure = (reply: FastifyReply) => {
    for (const [name, value] of securityHeaders) reply.header(name, value);
    return reply;
  };
  const notBuilt = () =>
    new HttpError('console_not_built', 'the console is not built: run `npm run build` (npm start does)');

  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    if (!builtPage) throw notBuilt();
    return secure(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(builtPage);
  };

  app.get('/', { schema: { hide: true } }, page);
  if (builtPage) {
    await app.register(fastifyStatic, {
      root: join(dir, 'console'),
      prefix: '/console/',
      preCompressed: true,
      index: false,
      redirect: false,
      decorateReply: false,
      maxAge: ASSET_MAX_AGE_MS,
      immutable: true,
      // Only answers that are files: a 404 stays an uncached problem.
      setHeaders: (response) => {
        for (const [name, value] of securityHeaders) response.setHeader(name, value);
        response.setHeader('vary', 'accept-encoding');
      },
    });
  } else {
    app.get('/console/*', { schema: { hide: true } }, async () => {
      throw notBuilt();
    });
  }
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
