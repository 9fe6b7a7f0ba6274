import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SimContext } from '../sim-context.js';

/** The query parameters of GitHub's page-based pagination. */
export interface PageQuery {
  per_page?: string;
  page?: string;
}

/** `per_page` (default 30, at most 100) and `page` (default 1), read leniently like GitHub. */
export function pageParams(query: PageQuery): { perPage: number; page: number } {
  return {
    perPage: Math.min(100, Math.max(1, Number(query.per_page ?? 30) || 30)),
    page: Math.max(1, Math.floor(Number(query.page ?? 1)) || 1),
  };
}

/**
 * One page of `items`, with GitHub's `Link` header when there is more than one page:
 * `<…?page=3>; rel="prev", <…?page=5>; rel="next", <…?page=9>; rel="last", <…?page=1>; rel="first"`
 * (https://docs.github.com/rest/using-the-rest-api/using-pagination-in-the-rest-api). Each link is
 * the request's own URL, other query parameters kept, with `page` set.
 */
export function paginate<T>(
  ctx: SimContext,
  request: FastifyRequest<{ Querystring: PageQuery }>,
  reply: FastifyReply,
  items: T[],
): T[] {
  const { perPage, page } = pageParams(request.query);
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  const url = new URL(request.url, ctx.urls.base);
  const link = (target: number, rel: string) => {
    url.searchParams.set('page', String(target));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(Math.min(page - 1, lastPage), 'prev'));
  if (page < lastPage) links.push(link(page + 1, 'next'), link(lastPage, 'last'));
  if (page > 1) links.push(link(1, 'first'));
  if (links.length > 0) reply.header('link', links.join(', '));
  return items.slice((page - 1) * perPage, page * perPage);
}
