import type { QueryKey } from '@tanstack/react-query';

/**
 * What each kind of change makes stale: the queries (by the leading part of their keys) read again
 * once the change succeeds. Every change is audited, so the audit trail is always among them.
 */
export const STALE_AFTER = {
  repository: [['repositories'], ['workflows'], ['subscriptions'], ['audit']],
  whitelist: [['workflows'], ['blocked'], ['audit']],
  service: [['services'], ['directory'], ['directory-schema'], ['audit']],
  subscription: [['subscriptions'], ['connections'], ['directory'], ['audit']],
  delivery: [['delivery'], ['deliveries'], ['connections'], ['audit']],
  recovery: [['recoveries'], ['recovery'], ['deliveries'], ['audit']],
  token: [['tokens'], ['audit']],
} satisfies Record<string, QueryKey[]>;
