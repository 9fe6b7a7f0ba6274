/**
 * The management API's types, generated from docs/openapi.json into schema.d.ts
 * (`npm run generate -w @zekt/client`; a test fails when it is stale). Types only: nothing here
 * runs, so the published server can import it (`import type`) without shipping this package.
 */
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** The JSON body of an operation's success answer (200, 201 or 202). */
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Success<R> = Json<R[200 & keyof R]> | Json<R[201 & keyof R]> | Json<R[202 & keyof R]>;
export type Answer<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: infer R;
}
  ? Success<R>
  : never;

/** An RFC 9457 problem, as every error answer of the API carries it (`code` is stable). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  [extension: string]: unknown;
}
