import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import type { App } from '../app.js';
import { HttpError } from '../problem.js';

/** The built console (apps/console/dist), from this module in src/ or dist/ alike. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../../../console/dist/', import.meta.url));

const ASSETS: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'styles.css': 'text/css; charset=utf-8',
};

/** Paths that are never console pages: an unknown one there is an API 404, not the page. */
const NOT_PAGES = /^\/(api|auth|webhooks|console)(\/|$)|^\/(healthz|readyz)$/;

/**
 * Serves the console: its assets under /console/, and its page for `/` and every other GET a
 * browser navigates to (the console routes by path). The page and its assets are read once.
 *
 * The headers make the page hard to misuse: scripts and styles only from Zekt itself (CSP), never
 * framed, no MIME sniffing, no referrer to other sites.
 */
export function registerConsoleRoutes(
  app: App,
  options: { consoleDir?: string; githubWebUrl: string },
): void {
  const dir = options.consoleDir ?? DEFAULT_CONSOLE_DIR;
  const built = existsSync(join(dir, 'index.html'));
  const files = new Map<string, Buffer>();
  const read = (name: string): Buffer => {
    let content = files.get(name);
    if (!content) {
      content = readFileSync(join(dir, name));
      files.set(name, content);
    }
    return content;
  };
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

  const page = async (_request: unknown, reply: FastifyReply) => {
    if (!built) throw notBuilt();
    return secure(reply)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(read('index.html'));
  };

  app.get('/', { schema: { hide: true } }, page);
  app.get('/console/:asset', { schema: { hide: true } }, async (request, reply) => {
    const { asset } = request.params as { asset: string };
    const type = ASSETS[asset];
    if (!type) throw new HttpError('route_not_found', `no console file ${asset}`);
    if (!built) throw notBuilt();
    return secure(reply).header('cache-control', 'no-cache').type(type).send(read(asset));
  });
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const wantsPage = (request.headers.accept ?? '').includes('text/html');
    if (NOT_PAGES.test(path) || !wantsPage) {
      throw new HttpError('route_not_found', `no route for GET ${path}`);
    }
    return page(request, reply);
  });
}
