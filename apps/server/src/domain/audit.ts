/**
 * The audit trail: every change of configuration is recorded with who made it, when,
 * on which account, what it acted on and what changed. This file names the actions and the kinds
 * of targets; the words are the glossary's.
 */
export const AUDIT_ACTIONS = [
  'provider.switch',
  'completion_tracking.switch',
  'workflow.whitelist',
  'service.create',
  'service.update',
  'service.publish',
  'service.unpublish',
  'service.schema_version',
  'service.schema_enforcement',
  'subscription.request',
  'subscription.approve',
  'subscription.deny',
  'subscription.revoke',
  'subscription.withdraw',
  'subscription.durable',
  'subscription.delivery_mode',
  'token.create',
  'token.revoke',
  'delivery.replay',
  'recovery.start',
  'recovery.cancel',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditTargetType =
  | 'repository'
  | 'workflow'
  | 'service'
  | 'subscription'
  | 'token'
  | 'delivery'
  | 'recovery';

/** Who made a change: a person (through an API token or the console) or the operator's CLI. */
export interface AuditActor {
  userId: string | null;
  login: string;
  /** The API token the change was made with; null for the console session and the CLI. */
  tokenId: string | null;
}

/** A change as the trail keeps it; `before`/`after` hold only the fields that changed. */
export interface AuditChange {
  actor: AuditActor;
  /** Every account the change concerns: each sees the entry (a subscription has two sides). */
  accountIds: number[];
  action: AuditAction;
  target: { type: AuditTargetType; id: string };
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/**
 * What a service edit changed: the fields whose value differs, before and after. Publishing (or
 * withdrawing from the directory) is named as such, since that is what people look for.
 *
 * @example serviceEdit({ published: false, slug: 'a' }, { published: true })
 *   // { action: 'service.publish', before: { published: false }, after: { published: true } }
 */
export function serviceEdit(
  current: Record<string, unknown>,
  requested: Record<string, unknown>,
): { action: AuditAction; before: Record<string, unknown>; after: Record<string, unknown> } | null {
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(requested)) {
    if (value === undefined) continue;
    if (JSON.stringify(current[field]) === JSON.stringify(value)) continue;
    before[field] = current[field];
    after[field] = value;
  }
  if (Object.keys(after).length === 0) return null;
  const action: AuditAction =
    after.published === true
      ? 'service.publish'
      : after.published === false
        ? 'service.unpublish'
        : 'service.update';
  return { action, before, after };
}
