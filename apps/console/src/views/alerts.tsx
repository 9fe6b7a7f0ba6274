import { type Answer, api, ok } from '../api/client';
import { Badge, type Tone } from '../components/badge';
import { Page } from '../components/page';
import { Empty } from '../components/states';
import { QueryTable } from '../components/table';
import { Time } from '../components/time';
import { useQuery } from '../hooks/use-query';

type Alert = Answer<'/api/v1/alerts', 'get'>['alerts'][number];

/** What each kind means to the person reading it, and how loud it is. */
const KINDS: Record<string, { label: string; tone: Tone }> = {
  'connection.warning': { label: 'Connection turned Warning', tone: 'warn' },
  'connection.critical': { label: 'Connection turned Critical', tone: 'bad' },
  'connection.recovered': { label: 'Connection recovered', tone: 'ok' },
  'delivery.exhausted': { label: 'Delivery exhausted its retries', tone: 'bad' },
  'delivery.not_started': { label: 'Deliveries not started', tone: 'warn' },
  'service.schema_changed': { label: 'Service schema changed', tone: 'info' },
};

/**
 * Where each alert went: an operator reads "unsent" as "Zekt has no alert URL", not as a failure,
 * so it says that in words.
 */
const STATUSES: Record<string, { label: string; tone: Tone }> = {
  pending: { label: 'Sending', tone: 'info' },
  sent: { label: 'Sent', tone: 'ok' },
  failed: { label: 'Not delivered', tone: 'bad' },
  unsent: { label: 'Not sent: no alert URL', tone: 'neutral' },
};

/** Why the last send failed: the server names a category, never the receiver's own error. */
const SEND_FAILURES: Record<string, string> = {
  unreachable: 'the alert receiver could not be reached',
  timeout: 'the alert receiver did not answer in time',
  error_status: 'the alert receiver answered with an error status',
  redirect: 'the alert receiver answered with a redirect (not followed)',
};

/** The connection or delivery an alert is about, from its data, in one line. */
function subject(alert: Alert): string {
  const data = alert.data;
  const text = (key: string) => (typeof data[key] === 'string' ? (data[key] as string) : undefined);
  const parts: string[] = [];
  const service = text('service');
  const consumer = text('consumer');
  if (service) parts.push(consumer ? `${service} → ${consumer}` : service);
  if (text('health')) parts.push(`${text('previousHealth') ?? 'Healthy'} → ${text('health')}`);
  if (text('deliveryId')) parts.push(`delivery ${text('deliveryId')}`);
  if (text('eventType')) parts.push(`event type ${text('eventType')}`);
  if (typeof data.count === 'number') parts.push(`${data.count} not started`);
  if (typeof data.schemaVersion === 'number') {
    const breaking = (data.compatibility as { breaking?: boolean } | undefined)?.breaking === true;
    parts.push(`schema version ${data.schemaVersion}${breaking ? ' (breaking)' : ''}`);
  }
  if (text('lastFailure')) parts.push(text('lastFailure') as string);
  return parts.join(' · ') || '—';
}

/** Alerts: the operational events Zekt raised for the caller's accounts, newest first. */
export function AlertsView() {
  const alerts = useQuery(
    ['alerts'],
    () => ok(api.GET('/api/v1/alerts', { params: { query: { limit: '100' } } })),
    {
      pollMs: 5000,
    },
  );
  return (
    <Page
      title="Alerts"
      intro="Zekt raises an alert when a connection turns Warning or Critical or recovers, when a durable delivery exhausts its retries, when deliveries are not started and when a service you subscribe to changes its message schema. They are sent, signed, to the alert URL the operator configured (ZEKT_ALERT_URL) and listed here for the consumer account."
      updatedAt={alerts.updatedAt}
    >
      <QueryTable
        query={alerts}
        what="alerts"
        rows={(data) => data.alerts}
        rowKey={(alert) => alert.id}
        label="Alerts"
        empty={
          <Empty title="No alerts">
            Nothing has turned Warning or Critical, and no delivery has run out of retries.
          </Empty>
        }
        columns={[
          { header: 'Raised', cell: (alert) => <Time iso={alert.createdAt} /> },
          {
            header: 'Alert',
            cell: (alert) => {
              const kind = KINDS[alert.kind] ?? { label: alert.kind, tone: 'neutral' as Tone };
              return <Badge tone={kind.tone}>{kind.label}</Badge>;
            },
          },
          { header: 'About', cell: subject },
          { header: 'Account', cell: (alert) => alert.account },
          { header: 'Sent', cell: (alert) => <Sent alert={alert} /> },
        ]}
      />
    </Page>
  );
}

/** Whether the alert went out: its state (why it failed, on hover), tries and when. */
function Sent({ alert }: { alert: Alert }) {
  const status = STATUSES[alert.status] ?? { label: alert.status, tone: 'neutral' as Tone };
  return (
    <>
      <Badge
        tone={status.tone}
        title={alert.lastError ? (SEND_FAILURES[alert.lastError] ?? alert.lastError) : undefined}
      >
        {status.label}
      </Badge>
      {alert.attempts > 0 ? <span className="muted"> · {alert.attempts} tries</span> : null}
      {alert.sentAt ? (
        <>
          {' '}
          <Time iso={alert.sentAt} />
        </>
      ) : null}
    </>
  );
}
