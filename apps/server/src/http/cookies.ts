import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Zekt's cookies: the console session, the login's `state` and the setup session, parsed and
 * written by @fastify/cookie (registered in app.ts). Every one is HttpOnly (no script reads it) and
 * SameSite=Lax (no cross-site POST carries it); Secure whenever Zekt is served over HTTPS.
 */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  return request.cookies[name];
}

export interface CookieOptions {
  /** Whole seconds; 0 deletes the cookie. */
  maxAge: number;
  secure: boolean;
  path?: string;
}

/** Adds a cookie to the answer; cookies of different names stand side by side. */
export function setCookie(
  reply: FastifyReply,
  name: string,
  value: string,
  options: CookieOptions,
): FastifyReply {
  return reply.setCookie(name, value, {
    path: options.path ?? '/',
    maxAge: options.maxAge,
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
  });
}
