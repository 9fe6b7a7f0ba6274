import type { AuditActor } from '../domain/audit.js';
import type { Caller } from './authenticate.js';

/** Who the audit trail names for a change made through the API: the person and their token. */
export function auditActor(caller: Caller): AuditActor {
  return { userId: caller.user.user_id, login: caller.user.login, tokenId: caller.tokenId };
}
