import { allPages, api, ok, type Subscription } from '../api/client';

/** The user's subscriptions on one side: `provider` (to their services) or `consumer` (theirs). */
export function loadSubscriptions(role: 'provider' | 'consumer'): Promise<Subscription[]> {
  return allPages(async (cursor) => {
    const page = await ok(
      api.GET('/api/v1/subscriptions', {
        params: { query: { role, limit: '100', ...(cursor ? { cursor } : {}) } },
      }),
    );
    return { items: page.subscriptions, nextCursor: page.nextCursor };
  });
}

export type Decision = 'approve' | 'deny' | 'revoke';

export function decide(id: string, decision: Decision): Promise<Subscription> {
  const params = { params: { path: { id } } };
  switch (decision) {
    case 'approve':
      return ok(api.POST('/api/v1/subscriptions/{id}/approve', params));
    case 'deny':
      return ok(api.POST('/api/v1/subscriptions/{id}/deny', params));
    case 'revoke':
      return ok(api.POST('/api/v1/subscriptions/{id}/revoke', params));
  }
}
