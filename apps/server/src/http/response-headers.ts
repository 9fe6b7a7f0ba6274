import type { FastifyInstance } from 'fastify';

/**
 * Headers on every answer: `nosniff`, so no browser runs a JSON or problem
 * answer as a script or page; and, when Zekt is reached over https, HSTS, so a browser that once
 * came over https never again sends the session cookie in clear. No `includeSubDomains`: Zekt does
 * not own its parent domain's other hosts.
 */
export function addSecurityHeaders(app: FastifyInstance, options: { https: boolean }): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    if (options.https) reply.header('strict-transport-security', 'max-age=31536000');
    return payload;
  });
}
