import { useState } from 'react';
import { STALE_AFTER } from '../api/changes';
import type { Subscription } from '../api/client';
import { Badge, SubscriptionBadge } from '../components/badge';
import { Modal } from '../components/modal';
import { Page } from '../components/page';
import { Empty, InlineError, QueryView } from '../components/states';
import { headers, Table } from '../components/table';
import { Time } from '../components/time';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { type Decision, decide, loadSubscriptions } from './subscriptions-data';

/** Provider › Subscribers: requests to approve or deny, active subscribers to revoke, and the past. */
export function SubscribersView() {
  const subscriptions = useQuery(['subscriptions', 'provider'], () => loadSubscriptions('provider'));
  return (
    <Page
      title="Subscribers"
      intro="Consumers ask for access to your services; each approved subscription delivers your runs to one of their repositories."
    >
      <QueryView query={subscriptions} what="subscribers">
        {(list) => {
          const requests = list.filter((s) => s.status === 'requested');
          const active = list.filter((s) => s.status === 'approved');
          const past = list.filter(
            (s) => s.status === 'denied' || s.status === 'revoked' || s.status === 'withdrawn',
          );
          return (
            <>
              <h2>Requests</h2>
              {requests.length === 0 ? (
                <Empty title="No requests waiting.">
                  Consumers find your published services in the Directory and request access there.
                </Empty>
              ) : (
                <SubscriberTable label="Requests" rows={requests} />
              )}
              <h2>Active subscribers</h2>
              {active.length === 0 ? (
                <Empty title="No active subscribers yet." />
              ) : (
                <SubscriberTable label="Active subscribers" rows={active} />
              )}
              {past.length > 0 ? (
                <>
                  <h2>Denied and revoked</h2>
                  <SubscriberTable label="Denied and revoked" rows={past} />
                </>
              ) : null}
            </>
          );
        }}
      </QueryView>
    </Page>
  );
}

function SubscriberTable({ label, rows }: { label: string; rows: Subscription[] }) {
  return (
    <Table
      label={label}
      columns={headers('Consumer', 'Delivers to', 'Service', 'Requested', 'Status', 'Decision')}
      rows={rows}
      rowKey={(subscription) => subscription.id}
      cells={(subscription) => <SubscriberCells subscription={subscription} />}
    />
  );
}

function SubscriberCells({ subscription }: { subscription: Subscription }) {
  const [confirming, setConfirming] = useState(false);
  const action = useAction(
    async (decision: Decision) => {
      await decide(subscription.id, decision);
      setConfirming(false);
    },
    { invalidates: STALE_AFTER.subscription },
  );
  const who = `${subscription.consumer.account} (${subscription.deliversTo})`;
  return (
    <>
      <th scope="row">{subscription.consumer.account}</th>
      <td>{subscription.deliversTo}</td>
      <td>
        {subscription.service.slug} {subscription.durable ? <Badge tone="info">Durable</Badge> : null}
      </td>
      <td>
        <Time iso={subscription.requestedAt} />
      </td>
      <td>
        <SubscriptionBadge status={subscription.status} />
      </td>
      <td>
        <div className="row-actions">
          {subscription.status === 'requested' ? (
            <>
              <button
                type="button"
                className="primary"
                disabled={action.pending}
                aria-label={`Approve ${who}`}
                onClick={() => void action.run('approve')}
              >
                Approve
              </button>
              <button
                type="button"
                disabled={action.pending}
                aria-label={`Deny ${who}`}
                onClick={() => void action.run('deny')}
              >
                Deny
              </button>
            </>
          ) : null}
          {subscription.status === 'approved' ? (
            <button
              type="button"
              className="danger"
              disabled={action.pending}
              aria-label={`Revoke ${who}`}
              onClick={() => setConfirming(true)}
            >
              Revoke
            </button>
          ) : null}
        </div>
        {!confirming ? <InlineError error={action.error} /> : null}
        <Modal
          open={confirming}
          title={`Revoke ${subscription.consumer.account}’s subscription?`}
          busy={action.pending}
          onClose={() => setConfirming(false)}
          actions={
            <>
              <button
                type="button"
                className="danger"
                disabled={action.pending}
                onClick={() => void action.run('revoke')}
              >
                {action.pending ? 'Revoking…' : 'Revoke'}
              </button>
              <button type="button" disabled={action.pending} onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          }
        >
          <p>
            {subscription.deliversTo} stops receiving {subscription.service.slug}’s runs at once. The consumer
            can request access again.
          </p>
          <InlineError error={action.error} />
        </Modal>
      </td>
    </>
  );
}
