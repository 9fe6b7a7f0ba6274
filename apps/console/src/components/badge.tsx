import type { ReactNode } from 'react';

export type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'neutral';

export function Badge({ tone, children, title }: { tone: Tone; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

const DELIVERY_TONES: Record<string, Tone> = {
  Dispatched: 'info',
  Confirmed: 'info',
  Completed: 'ok',
  Failed: 'bad',
};

export function DeliveryBadge({ status }: { status: string }) {
  return <Badge tone={DELIVERY_TONES[status] ?? 'neutral'}>{status}</Badge>;
}

/** Beside a Dispatched badge: GitHub accepted the delivery but no consumer workflow ever started. */
export function NotStartedBadge() {
  return (
    <Badge tone="warn" title="GitHub accepted the dispatch, but no consumer workflow run started">
      Not started
    </Badge>
  );
}

const SUBSCRIPTION_TONES: Record<string, Tone> = {
  requested: 'warn',
  approved: 'ok',
  denied: 'bad',
  revoked: 'neutral',
  withdrawn: 'neutral',
};

const SUBSCRIPTION_LABELS: Record<string, string> = {
  requested: 'Requested',
  approved: 'Approved',
  denied: 'Denied',
  revoked: 'Revoked',
  withdrawn: 'Withdrawn',
};

export function SubscriptionBadge({ status }: { status: string }) {
  return (
    <Badge tone={SUBSCRIPTION_TONES[status] ?? 'neutral'}>{SUBSCRIPTION_LABELS[status] ?? status}</Badge>
  );
}

/**
 * Connection health in the seed's words and colours. The seed counts a connection with no events
 * yet as Healthy; the console shows it as "No data" (grey), and says it counts as Healthy, because
 * a green badge on a connection that never carried an event would claim something nobody saw.
 */
export function HealthBadge({ health, hasEvents }: { health: string; hasEvents: boolean }) {
  if (!hasEvents) {
    return (
      <Badge tone="neutral" title="No events yet: counts as Healthy (the seed's rule)">
        No data
      </Badge>
    );
  }
  const tone: Tone = health === 'Healthy' ? 'ok' : health === 'Warning' ? 'warn' : 'bad';
  return <Badge tone={tone}>{health}</Badge>;
}
