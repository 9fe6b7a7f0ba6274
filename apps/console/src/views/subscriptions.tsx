import { useState } from 'react';
import { api, ok, type Subscription } from '../api/client';
import { SubscriptionBadge } from '../components/badge';
import { Modal } from '../components/modal';
import { Page, TableWrap } from '../components/page';
import { Empty, InlineError, QueryView } from '../components/states';
import { Switch } from '../components/switch';
import { formatDate } from '../format';
import { useAction } from '../hooks/use-action';
import { useQuery } from '../hooks/use-query';
import { Link } from '../router';
import { decide, loadSubscriptions } from './subscriptions-data';

/**
 * Consumer › Zekt Subscriptions: each subscribed service with the repository it delivers to, when
 * it was subscribed, its status, Remove, and the Durable Delivery switch (the seed's step 4). Durable
 * Delivery needs COMPLETION on for the repository; the API refuses otherwise, and says so here.
 */
export function SubscriptionsView() {
  const subscriptions = useQuery('subscriptions:consumer', () => loadSubscriptions('consumer'));
  return (
    <Page
      title="Zekt Subscriptions"
      intro="Durable Delivery tracks every delivery to its end (Confirmed, Completed or Failed), retries what GitHub refused, and keeps it replayable. It costs more GitHub API calls: use it where losing an event costs more than tracking it."
    >
      <QueryView query={subscriptions} what="subscriptions">
        {(list) =>
          list.length === 0 ? (
            <Empty title="You have no subscriptions yet.">
              Find a service in the <Link to="/directory">Directory</Link> and request access for one of your
              repositories.
            </Empty>
          ) : (
            <TableWrap label="Subscriptions">
              <table aria-label="Subscriptions">
                <thead>
                  <tr>
                    <th scope="col">Service</th>
                    <th scope="col">Delivers to</th>
                    <th scope="col">Subscribed</th>
                    <th scope="col">Status</th>
                    <th scope="col">Durable Delivery</th>
                    <th scope="col">
                      <span className="sr-only">Remove</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((subscription) => (
                    <SubscriptionRow
                      key={subscription.id}
                      subscription={subscription}
                      onChanged={subscriptions.reload}
                    />
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )
        }
      </QueryView>
    </Page>
  );
}

function SubscriptionRow({ subscription, onChanged }: { subscription: Subscription; onChanged: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(async () => {
    await decide(subscription.id, 'revoke');
    setConfirming(false);
    onChanged();
  });
  const live = subscription.status === 'requested' || subscription.status === 'approved';
  return (
    <tr>
      <th scope="row">
        {subscription.service.slug}
        <div className="muted small">
          {subscription.provider.repository} · {subscription.provider.workflow} ·{' '}
          <code>{subscription.service.eventType}</code>
        </div>
      </th>
      <td>
        {subscription.deliversTo}
        {!subscription.completionTracking ? <div className="muted small">COMPLETION off</div> : null}
      </td>
      <td>{formatDate(subscription.requestedAt)}</td>
      <td>
        <SubscriptionBadge status={subscription.status} />
      </td>
      <td>
        {subscription.status === 'approved' ? (
          <Switch
            id={`durable-${subscription.id}`}
            label={`Durable Delivery: ${subscription.service.slug} to ${subscription.deliversTo}`}
            checked={subscription.durable}
            onChange={async (durable) => {
              await ok(
                api.PATCH('/api/v1/subscriptions/{id}', {
                  params: { path: { id: subscription.id } },
                  body: { durable },
                }),
              );
              onChanged();
            }}
          />
        ) : (
          <span className="muted">{subscription.status === 'requested' ? 'after approval' : '—'}</span>
        )}
      </td>
      <td>
        {live ? (
          <button
            type="button"
            className="danger"
            aria-label={`Remove ${subscription.service.slug} from ${subscription.deliversTo}`}
            onClick={() => setConfirming(true)}
          >
            Remove
          </button>
        ) : null}
        <Modal
          open={confirming}
          title={`Remove ${subscription.service.slug} from ${subscription.deliversTo}?`}
          busy={remove.pending}
          onClose={() => setConfirming(false)}
          actions={
            <>
              <button
                type="button"
                className="danger"
                disabled={remove.pending}
                onClick={() => void remove.run()}
              >
                {remove.pending ? 'Removing…' : 'Remove'}
              </button>
              <button type="button" disabled={remove.pending} onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </>
          }
        >
          <p>
            {subscription.deliversTo} stops receiving {subscription.service.slug}’s runs. You can request
            access again from the Directory.
          </p>
          <InlineError error={remove.error} />
        </Modal>
      </td>
    </tr>
  );
}
