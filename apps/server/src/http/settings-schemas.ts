import Type from 'typebox';
import { CHECK_IDS, type CheckId } from '../domain/service-checks.js';

/**
 * The shapes of the Settings routes (service checks and API tokens), beside api-schemas.ts's:
 * declared by the routes, so they reach docs/openapi.json and the console's generated types.
 */

const Time = Type.String({ format: 'date-time' });

export const ServiceCheckSchema = Type.Object({
  id: Type.Unsafe<CheckId>({ type: 'string', enum: [...CHECK_IDS] }),
  title: Type.String(),
  status: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('skipped')]),
  summary: Type.String({ description: 'what the check found' }),
  fix: Type.Union([Type.String({ description: 'what to do, naming the setting' }), Type.Null()]),
});

export const ServiceChecksSchema = Type.Object({
  ok: Type.Boolean({ description: 'no check failed' }),
  checkedAt: Type.String({
    format: 'date-time',
    description: 'when the facts were gathered (the server keeps them for 30 s)',
  }),
  checks: Type.Array(ServiceCheckSchema),
});

const TokenFields = {
  id: Type.String(),
  name: Type.String(),
  createdAt: Time,
  expiresAt: Type.Union([Time, Type.Null()], {
    description: 'null: never (tokens of the operator’s zekt token create)',
  }),
  expired: Type.Boolean(),
};

export const ApiTokenSchema = Type.Object({
  ...TokenFields,
  current: Type.Boolean({ description: 'the token this request was made with' }),
});

export const CreatedApiTokenSchema = Type.Object({
  ...TokenFields,
  token: Type.String({ description: 'the secret (zkt_…): shown this once, only its hash is kept' }),
});

export const ApiTokenPageSchema = Type.Object({
  tokens: Type.Array(ApiTokenSchema),
  nextCursor: Type.Union([
    Type.String({ description: 'pass back as ?cursor= for the next page; null on the last page' }),
    Type.Null(),
  ]),
});
