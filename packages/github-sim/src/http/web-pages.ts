import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SimContext } from '../sim-context.js';

/**
 * What the web host's pages (installing an App, registering one from a manifest) share: form
 * bodies parsed into fields, HTML answers, and the users a page offers to sign in as.
 */
export function acceptForms(instance: FastifyInstance, bodyLimit: number): void {
  instance.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit },
    (_request, body, parsed) => parsed(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );
}

export function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

/** The logins of the users the simulator knows. */
export function userLogins(ctx: SimContext): string[] {
  return [...ctx.state.accounts.values()].filter((a) => a.type === 'User').map((a) => a.login);
}
