import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSummary } from '../../test/support/run-summary.js';
import { getAccountByLogin, getRepository, upsertInstalledAccount, upsertRepositories } from './accounts.js';
import {
  type ClaimOptions,
  claimWithContext,
  finishAttempt,
  getDelivery,
  insertDeliveries,
  listAttempts,
  newDeliveryRow,
} from './deliveries/index.js';
import { getEventByRunKey, insertEvent, takeDueEvent } from './events.js';
import { beginHookPlacement, completeHookPlacement, findHooksBeingPlaced } from './hooks.js';
import { getMessageByRunKey, upsertMessage } from './messages.js';
import { receiveAndCountCompletion, receiveCompletion } from './received-event.js';
import { writeRoutedEvent } from './routed-event.js';
import { readRouting } from './routing-read.js';
import type { NewDelivery } from './schema.js';
import { createService } from './services.js';
import type { Store } from './store.js';
import {
  createSubscription,
  routableSubscriptions,
  setDurable,
  setSubscriptionStatus,
} from './subscriptions.js';
import { countUsage, getUsage } from './usage.js';
import { recordWebhookDelivery } from './webhook-deliveries.js';
import { getWorkflow, recordWorkflowSeen, setWhitelisted, WORKFLOW_SEEN_PRECISION_MS } from './workflows.js';

/**
 * The behaviour every store adapter must have. Each adapter's test file calls this with a way to
 * open a fresh, migrated store.
 */
export function describeStoreContract(
  name: string,
  open: () => Promise<{ store: Store; dispose(): Promise<void> }>,
) {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await open());
    });
    afterEach(async () => {
      await dispose();
    });

    const summary = runSummary();

    /** Account 1 (installation 11) with its repository 10, `<login>/api`. */
    const installRepository = async (login: string, isPrivate: boolean) => {
      await upsertInstalledAccount(
        store.db,
        { accountId: 1, login, type: 'Organization', installationId: 11 },
        1,
      );
      await upsertRepositories(
        store.db,
        1,
        [{ repositoryId: 10, fullName: `${login}/api`, name: 'api', private: isPrivate }],
        1,
      );
    };

    it('migrations are idempotent', async () => {
      expect(await store.migrate()).toEqual([]);
    });

    it('remembers webhook delivery GUIDs per hook: one event has one GUID on every hook', async () => {
      const delivery = { guid: 'guid-1', event: 'workflow_run', hookId: 5 };
      expect(await recordWebhookDelivery(store.db, delivery, 1)).toBe(true);
      expect(await recordWebhookDelivery(store.db, delivery, 2)).toBe(false);
      expect(await recordWebhookDelivery(store.db, { ...delivery, hookId: 6 }, 3)).toBe(true);
      expect(await recordWebhookDelivery(store.db, { ...delivery, hookId: 6 }, 4)).toBe(false);
      expect(await recordWebhookDelivery(store.db, { ...delivery, hookId: null }, 5)).toBe(true);
      expect(await recordWebhookDelivery(store.db, { ...delivery, hookId: null }, 6)).toBe(false);
    });

    it('keeps the GUIDs remembered before they were per hook meaningful', async () => {
      // Rows of webhook_deliveries: written before migration 0010, or by a previous version
      // during a rolling upgrade. One names the hook it came through; one names none.
      await store.db
        .insertInto('webhook_deliveries')
        .values([
          { delivery_guid: 'old-hooked', event: 'workflow_run', hook_id: 5, received_at: 1 },
          { delivery_guid: 'old-unknown', event: 'installation', hook_id: null, received_at: 1 },
          { delivery_guid: 'old-app', event: 'installation', hook_id: 900, received_at: 1 },
        ])
        .execute();
      const record = (guid: string, hookId: number | null) =>
        recordWebhookDelivery(store.db, { guid, event: 'workflow_run', hookId }, 2);
      expect(await record('old-hooked', 5)).toBe(false);
      expect(await record('old-hooked', 6)).toBe(true);
      expect(await record('old-unknown', 5)).toBe(false);
      expect(await record('old-unknown', null)).toBe(false);
      // The App's webhook (null: its own key) — its events reach no other hook, so any row counts.
      expect(await record('old-app', null)).toBe(false);
      expect(await record('old-app', 7)).toBe(true);
    });

    it('keeps one event per run key; a re-run attempt is a new run key', async () => {
      const event = { repositoryId: 10, runId: 77, runAttempt: 1, accountId: 1, summary, routeAfter: 100 };
      const first = await insertEvent(store.db, event, 100);
      expect(first).toMatch(/^evt_/);
      expect(await insertEvent(store.db, event, 101)).toBeNull();
      expect(await insertEvent(store.db, { ...event, runAttempt: 2 }, 102)).toMatch(/^evt_/);
      expect(
        (await getEventByRunKey(store.db, { repositoryId: 10, runId: 77, runAttempt: 1 }))?.event_id,
      ).toBe(first);
    });

    it("stores a webhook's GUID and its event together: nothing for a known GUID, no event for a known run key", async () => {
      await installRepository('acme', false);
      await store.db.updateTable('repositories').set({ provider_enabled: true }).execute();
      const traceParent = '00-'.padEnd(55, 'a');
      const receive = async (guid: string, hookId: number | null, now: number, runAttempt = 1) => {
        const received = await store.transaction((trx) =>
          receiveCompletion(
            trx,
            store.dialect,
            { repositoryId: 10, runId: 77, runAttempt, summary },
            { guid, event: 'workflow_run', hookId },
            { routeAfter: now + 50, traceParent },
            now,
          ),
        );
        return received.outcome === 'received' ? { eventId: received.eventId } : received.outcome;
      };
      const first = await receive('guid-a', 5, 100);
      if (typeof first === 'string') throw new Error(`a new GUID was taken for ${first}`);
      expect(first.eventId).toMatch(/^evt_/);
      const stored = await getEventByRunKey(store.db, { repositoryId: 10, runId: 77, runAttempt: 1 });
      // The very row insertEvent writes, under the repository's account.
      expect(stored).toEqual({
        event_id: first.eventId,
        repository_id: 10,
        run_id: 77,
        run_attempt: 1,
        account_id: 1,
        workflow_path: summary.workflowPath,
        workflow_name: 'Deploy',
        conclusion: 'success',
        summary: JSON.stringify(summary),
        received_at: 100,
        route_after: 150,
        route_status: 'pending',
        routed_at: null,
        message_id: null,
        deliveries_created: 0,
        trace_parent: traceParent,
      });
      // The same GUID through the same hook, for another run key: nothing is written.
      expect(await receive('guid-a', 5, 101, 2)).toBe('duplicate-receipt');
      expect(
        await getEventByRunKey(store.db, { repositoryId: 10, runId: 77, runAttempt: 2 }),
      ).toBeUndefined();
      // Another GUID of a run key received already: its receipt is kept, the event is not.
      expect(await receive('guid-b', 5, 102)).toEqual({ eventId: null });
      expect(await receive('guid-b', 5, 103, 2)).toBe('duplicate-receipt');
      // GUIDs remembered in the table of before migration 0010: one naming its hook counts for that
      // hook only, one naming none for every hook, and for the App's webhook any row counts.
      await store.db
        .insertInto('webhook_deliveries')
        .values([
          { delivery_guid: 'guid-old', event: 'workflow_run', hook_id: null, received_at: 1 },
          { delivery_guid: 'guid-hooked', event: 'workflow_run', hook_id: 5, received_at: 1 },
          { delivery_guid: 'guid-app', event: 'workflow_run', hook_id: 900, received_at: 1 },
        ])
        .execute();
      expect(await receive('guid-old', 5, 104, 3)).toBe('duplicate-receipt');
      expect(await receive('guid-hooked', 5, 105, 3)).toBe('duplicate-receipt');
      expect(await receive('guid-app', null, 106, 3)).toBe('duplicate-receipt');
      expect(
        await getEventByRunKey(store.db, { repositoryId: 10, runId: 77, runAttempt: 3 }),
      ).toBeUndefined();
      expect(await receive('guid-hooked', 6, 107, 3)).toEqual({ eventId: expect.stringMatching(/^evt_/) });
      const events = await store.db
        .selectFrom('events')
        .select('run_attempt')
        .orderBy('run_attempt')
        .execute();
      expect(events.map((row) => row.run_attempt)).toEqual([1, 3]);
    });

    it('receives nothing for a repository that is not an enabled provider', async () => {
      const receive = (guid: string, repositoryId = 10) =>
        store.transaction((trx) =>
          receiveCompletion(
            trx,
            store.dialect,
            { repositoryId, runId: 77, runAttempt: 1, summary },
            { guid, event: 'workflow_run', hookId: 5 },
            { routeAfter: 100, traceParent: null },
            100,
          ),
        );
      // Unknown, installed but not a provider, and a provider since removed.
      expect(await receive('guid-unknown', 99)).toEqual({ outcome: 'not-a-provider' });
      await installRepository('acme', false);
      expect(await receive('guid-off')).toEqual({ outcome: 'not-a-provider' });
      await store.db.updateTable('repositories').set({ provider_enabled: true, removed_at: 50 }).execute();
      expect(await receive('guid-removed')).toEqual({ outcome: 'not-a-provider' });
      expect(await store.db.selectFrom('webhook_receipts').select('delivery_guid').execute()).toEqual([]);
      expect(await store.db.selectFrom('events').select('event_id').execute()).toEqual([]);
    });

    it('receives and counts webhooks routed later, asked for together, each as if received alone', async () => {
      await installRepository('acme', false);
      await store.db.updateTable('repositories').set({ provider_enabled: true }).execute();
      const day = Date.UTC(2026, 10, 20, 12);
      const receive = (guid: string, runId: number, repositoryId = 10) =>
        receiveAndCountCompletion(
          store,
          { repositoryId, runId, runAttempt: 1, summary: { ...summary, runId: String(runId) } },
          { guid, event: 'workflow_run', hookId: 5 },
          { routeAfter: day + 50, traceParent: null },
          day,
        ).then((received) =>
          received.outcome === 'received'
            ? { eventId: received.eventId === null ? null : 'new' }
            : received.outcome,
        );
      // As concurrent webhooks ask: in one turn of the event loop (one statement on PostgreSQL).
      // The same GUID twice and the same run under two GUIDs go one after the other, in order.
      const outcomes = await Promise.all([
        receive('guid-a', 77),
        receive('guid-b', 78),
        receive('guid-a', 79),
        receive('guid-c', 77),
        receive('guid-d', 80, 99),
      ]);
      expect(outcomes).toEqual([
        { eventId: 'new' },
        { eventId: 'new' },
        'duplicate-receipt',
        { eventId: null },
        'not-a-provider',
      ]);
      const events = await store.db
        .selectFrom('events')
        .select(['run_id', 'route_status'])
        .orderBy('run_id')
        .execute();
      expect(events).toEqual([
        { run_id: 77, route_status: 'pending' },
        { run_id: 78, route_status: 'pending' },
      ]);
      // Three receipts written, two of them with a new event.
      const usage = await getUsage(store.db, 1, '2026-11', day);
      expect(usage.counters.webhookDeliveriesReceived).toBe(3);
      expect(usage.counters.eventsReceived).toBe(2);
      const workflow = await getWorkflow(store.db, 10, summary.workflowPath);
      expect(workflow).toMatchObject({ name: 'Deploy', first_seen_at: day, last_seen_at: day });
      // Within the sighting's precision the workflow is not written again; past it, it is.
      await receive('guid-e', 81);
      expect((await getWorkflow(store.db, 10, summary.workflowPath))?.last_seen_at).toBe(day);
      const later = day + WORKFLOW_SEEN_PRECISION_MS;
      await receiveAndCountCompletion(
        store,
        { repositoryId: 10, runId: 82, runAttempt: 1, summary: { ...summary, workflow: 'Ship' } },
        { guid: 'guid-f', event: 'workflow_run', hookId: 5 },
        { routeAfter: later, traceParent: null },
        later,
      );
      expect(await getWorkflow(store.db, 10, summary.workflowPath)).toMatchObject({
        name: 'Ship',
        first_seen_at: day,
        last_seen_at: later,
      });
      expect((await getUsage(store.db, 1, '2026-11', later)).counters).toMatchObject({
        webhookDeliveriesReceived: 5,
        eventsReceived: 4,
      });
    });

    it("writes a routed event's archive, deliveries and route status, all or none", async () => {
      const eventId = await insertEvent(
        store.db,
        { repositoryId: 10, runId: 77, runAttempt: 1, accountId: 1, summary, routeAfter: 100 },
        100,
      );
      if (eventId === null) throw new Error('the event was not stored');
      const delivery = (deliveryId: string, consumerAccountId: number) =>
        contractDelivery(
          { deliveryId, eventId, subscriptionId: `sub_${consumerAccountId}`, consumerAccountId },
          200,
        );
      const routed = {
        eventId,
        summaryJson: JSON.stringify(summary),
        payloadJson: '{"a":1}',
        payloadBytes: 7,
        archiveExpiresAt: 9_000,
        messageId: 'msg_1',
      };
      const write = (deliveries: NewDelivery[]) =>
        store.transaction((trx) => writeRoutedEvent(trx, store.dialect, routed, deliveries, 200));
      // A delivery id taken already fails the write: the archive and the route status go with it.
      await insertDeliveries(store.db, [delivery('dlv_taken', 9)]);
      await expect(write([delivery('dlv_1', 2), delivery('dlv_taken', 3)])).rejects.toThrow();
      expect(await store.db.selectFrom('archives').selectAll().execute()).toEqual([]);
      expect(
        (await getEventByRunKey(store.db, { repositoryId: 10, runId: 77, runAttempt: 1 }))?.route_status,
      ).toBe('pending');
      expect(await getDelivery(store.db, 'dlv_1')).toBeUndefined();

      await write([delivery('dlv_1', 2), delivery('dlv_2', 3)]);
      // A flag is 1 on SQLite, true on PostgreSQL.
      const archives = (await store.db.selectFrom('archives').selectAll().execute()).map((row) => ({
        ...row,
        has_message: Boolean(row.has_message),
      }));
      expect(archives).toEqual([
        {
          event_id: eventId,
          summary: JSON.stringify(summary),
          has_message: true,
          payload: '{"a":1}',
          payload_bytes: 7,
          archived_at: 200,
          expires_at: 9_000,
        },
      ]);
      expect((await getDelivery(store.db, 'dlv_1'))?.consumer_account_id).toBe(2);
      expect((await getDelivery(store.db, 'dlv_2'))?.consumer_account_id).toBe(3);
      const event = await getEventByRunKey(store.db, { repositoryId: 10, runId: 77, runAttempt: 1 });
      expect([event?.route_status, event?.routed_at, event?.message_id, event?.deliveries_created]).toEqual([
        'routed',
        200,
        'msg_1',
        2,
      ]);
    });

    it("reads a run's message and the routable subscriptions together, as each is read alone", async () => {
      await installRepository('acme', false);
      await upsertInstalledAccount(
        store.db,
        { accountId: 2, login: 'beta', type: 'Organization', installationId: 22 },
        1,
      );
      await upsertRepositories(
        store.db,
        2,
        [
          { repositoryId: 20, fullName: 'beta/app', name: 'app', private: true },
          { repositoryId: 21, fullName: 'beta/web', name: 'web', private: false },
        ],
        1,
      );
      const service = await createService(
        store.db,
        {
          accountId: 1,
          repositoryId: 10,
          workflowPath: summary.workflowPath,
          slug: 'deploys',
          eventType: 'deployed',
          description: '',
          tags: [],
          visibility: 'public',
          published: true,
        },
        2,
      );
      const subscribe = async (consumerAccountId: number, consumerRepositoryId: number, approve: boolean) => {
        const row = await createSubscription(
          store.db,
          { serviceId: service.service_id, consumerAccountId, consumerRepositoryId, requestedBy: 'alice' },
          3,
        );
        if (row === 'duplicate') throw new Error('the subscription exists already');
        if (approve)
          await setSubscriptionStatus(store.db, row.subscription_id, 'requested', 'approved', 'bob', 4);
        return row.subscription_id;
      };
      const durable = await subscribe(2, 20, true);
      await setDurable(store.db, durable, true, 5);
      await subscribe(1, 10, true);
      await subscribe(2, 21, false);
      await upsertMessage(
        store.db,
        {
          repositoryId: 10,
          runId: 77,
          runAttempt: 1,
          accountId: 1,
          workflowPath: summary.workflowPath,
          eventType: 'deployed',
          payloadJson: '{"a":"\\u00e9\\n"}',
          payloadBytes: 13,
          sender: { actor: 'alice' },
          schemaVersions: { deploys: 2 },
        },
        6,
      );
      const run = { repositoryId: 10, runId: 77, runAttempt: 1, workflowPath: summary.workflowPath };
      const read = await readRouting(store.db, store.dialect, run, true);
      expect(read.subscriptions).toHaveLength(2);
      expect(read.subscriptions.find((s) => s.subscriptionId === durable)?.durable).toBe(true);
      expect(read).toEqual({
        message: await getMessageByRunKey(store.db, run),
        subscriptions: await routableSubscriptions(store.db, 10, summary.workflowPath),
      });
      expect(read.message?.payload).toBe('{"a":"\\u00e9\\n"}');
      expect(await readRouting(store.db, store.dialect, run, false)).toEqual({
        message: read.message,
        subscriptions: [],
      });
      expect(await readRouting(store.db, store.dialect, { ...run, runId: 78 }, true)).toEqual({
        message: undefined,
        subscriptions: read.subscriptions,
      });

      // A completion webhook routed as it is stored: PostgreSQL's receive statement reads the same
      // (after the run's lock); SQLite's routing reads it itself. Either way routing gets the same.
      await store.db.updateTable('repositories').set({ provider_enabled: true }).execute();
      const routedAsStored = async (runId: number, whitelisted: boolean) => {
        await setWhitelisted(store.db, 10, summary.workflowPath, whitelisted, 7);
        const received = await store.transaction((trx) =>
          receiveCompletion(
            trx,
            store.dialect,
            { repositoryId: 10, runId, runAttempt: 1, summary },
            { guid: `guid-${runId}-${whitelisted}`, event: 'workflow_run', hookId: 5 },
            { routeAfter: 8, traceParent: null },
            8,
          ),
        );
        if (received.outcome !== 'received' || received.eventId === null) throw new Error('no new event');
        if (store.dialect === 'sqlite') expect(received.routing).toBeUndefined();
        return (
          received.routing ?? (await readRouting(store.db, store.dialect, { ...run, runId }, whitelisted))
        );
      };
      expect(await routedAsStored(77, true)).toEqual(read);
      expect(await routedAsStored(78, true)).toEqual({
        message: undefined,
        subscriptions: read.subscriptions,
      });
      expect(await routedAsStored(79, false)).toEqual({ message: undefined, subscriptions: [] });
    });

    it('hands out events only once they are due', async () => {
      await insertEvent(
        store.db,
        { repositoryId: 10, runId: 1, runAttempt: 1, accountId: 1, summary, routeAfter: 500 },
        0,
      );
      expect(await takeDueEvent(store.db, store.dialect, 499)).toBeUndefined();
      expect((await takeDueEvent(store.db, store.dialect, 500))?.run_id).toBe(1);
    });

    it('replaces the message of a run key', async () => {
      const message = {
        repositoryId: 10,
        runId: 77,
        runAttempt: 1,
        accountId: 1,
        workflowPath: '.github/workflows/deploy.yml',
        eventType: 'first',
        payloadJson: '{"a":1}',
        payloadBytes: 7,
        sender: { actor: 'alice' },
      };
      const first = await upsertMessage(store.db, message, 1);
      const second = await upsertMessage(
        store.db,
        { ...message, eventType: 'second', payloadJson: '{"a":2}' },
        2,
      );
      expect(first.replaced).toBe(false);
      expect(second).toEqual({ messageId: first.messageId, replaced: true });
      const stored = await getMessageByRunKey(store.db, message);
      expect([stored?.event_type, stored?.payload]).toEqual(['second', '{"a":2}']);
    });

    it('rolls a failed transaction back completely', async () => {
      await expect(
        store.transaction(async (trx) => {
          await recordWebhookDelivery(trx, { guid: 'rolled-back', event: 'x', hookId: null }, 1);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(
        await recordWebhookDelivery(store.db, { guid: 'rolled-back', event: 'x', hookId: null }, 2),
      ).toBe(true);
    });

    it('stores flags as booleans and looks logins up case-insensitively', async () => {
      await installRepository('Acme', true);
      expect((await getAccountByLogin(store.db, 'acme'))?.installation_id).toBe(11);
      const row = await store.db.selectFrom('repositories').selectAll().executeTakeFirstOrThrow();
      expect(Boolean(row.private)).toBe(true);
      expect(Boolean(row.provider_enabled)).toBe(false);
    });

    it('finds a hook being placed by its repository, also once its id was recorded', async () => {
      await installRepository('acme', false);
      const hook = {
        repositoryId: 10,
        role: 'provider' as const,
        secretEncrypted: 'sealed',
        url: 'https://z/webhooks/github',
      };
      await beginHookPlacement(store.db, hook, 1_000);
      expect((await findHooksBeingPlaced(store.db, 10, 500, 77)).map((h) => h.hook_id)).toEqual([null]);
      // GitHub's ping (X-GitHub-Hook-ID: 77) can be read after the create call recorded id 77.
      await completeHookPlacement(store.db, 10, 'provider', 77, 1_001);
      expect((await findHooksBeingPlaced(store.db, 10, 500, 77)).map((h) => h.hook_id)).toEqual([77]);
      expect(await findHooksBeingPlaced(store.db, 10, 500, 78)).toEqual([]);
      expect(await findHooksBeingPlaced(store.db, 10, 500, null)).toEqual([]);
      expect(await findHooksBeingPlaced(store.db, 10, 1_500, 77)).toEqual([]);
    });

    it("writes a workflow's last sighting only when it is missing, renamed or a minute old", async () => {
      await installRepository('acme', false);
      const path = '.github/workflows/deploy.yml';
      const seen = () => getWorkflow(store.db, 10, path);
      // Declared by a whitelisting before any run: never seen yet, so the first run writes.
      await setWhitelisted(store.db, 10, path, true, 500);
      expect(
        await recordWorkflowSeen(store.db, { repositoryId: 10, path, name: 'Deploy' }, 1_000),
      ).toBeUndefined();
      expect(await seen()).toMatchObject({
        name: 'Deploy',
        first_seen_at: 1_000,
        last_seen_at: 1_000,
      });
      // Within the precision: the row is read, not written (its updated_at stays), and returned for
      // routing to use.
      const fresh = await recordWorkflowSeen(
        store.db,
        { repositoryId: 10, path, name: 'Deploy' },
        1_000 + WORKFLOW_SEEN_PRECISION_MS - 1,
      );
      expect(fresh).toMatchObject({ name: 'Deploy', last_seen_at: 1_000 });
      expect(Boolean(fresh?.whitelisted)).toBe(true);
      expect(await seen()).toMatchObject({ last_seen_at: 1_000, updated_at: 1_000 });
      // Renamed: written at once.
      await recordWorkflowSeen(store.db, { repositoryId: 10, path, name: 'Ship' }, 2_000);
      expect(await seen()).toMatchObject({ name: 'Ship', first_seen_at: 1_000, last_seen_at: 2_000 });
      // A minute on: written again.
      const later = 2_000 + WORKFLOW_SEEN_PRECISION_MS;
      await recordWorkflowSeen(store.db, { repositoryId: 10, path, name: 'Ship' }, later);
      expect(await seen()).toMatchObject({ first_seen_at: 1_000, last_seen_at: later });
      expect(Boolean((await seen())?.whitelisted)).toBe(true);
    });

    it("reads a run's repository and its workflow as it receives the webhook, as each is read alone", async () => {
      await installRepository('acme', false);
      await store.db.updateTable('repositories').set({ provider_enabled: true }).execute();
      const path = '.github/workflows/deploy.yml';
      let runId = 77;
      const read = async (workflowPath: string) => {
        const received = await store.transaction((trx) =>
          receiveCompletion(
            trx,
            store.dialect,
            { repositoryId: 10, runId: runId++, runAttempt: 1, summary: { ...summary, workflowPath } },
            { guid: `guid-${runId}`, event: 'workflow_run', hookId: 5 },
            { routeAfter: 100, traceParent: null },
            100,
          ),
        );
        if (received.outcome !== 'received') throw new Error(received.outcome);
        return { repository: received.repository, workflow: received.workflow };
      };
      const repository = await getRepository(store.db, 10);
      expect(await read(path)).toEqual({ repository, workflow: undefined });
      await setWhitelisted(store.db, 10, path, true, 500);
      await recordWorkflowSeen(store.db, { repositoryId: 10, path, name: 'Deploy' }, 1_000);
      const workflow = await getWorkflow(store.db, 10, path);
      expect(workflow).toBeDefined();
      expect(await read(path)).toEqual({ repository, workflow });
      // Another workflow of the repository is not this run's.
      expect(await read('.github/workflows/other.yml')).toEqual({ repository, workflow: undefined });
    });

    it('counts usage per account and month', async () => {
      const november = Date.UTC(2026, 10, 15);
      await countUsage(store.db, 1, 'eventsReceived', november);
      await countUsage(store.db, 1, 'eventsReceived', november, 2);
      await countUsage(store.db, 1, 'eventsReceived', Date.UTC(2026, 11, 1));
      await countUsage(store.db, 2, 'eventsReceived', november);
      expect((await getUsage(store.db, 1, '2026-11')).counters.eventsReceived).toBe(3);
      expect((await getUsage(store.db, 1, '2026-12')).counters.eventsReceived).toBe(1);
      expect((await getUsage(store.db, 1, '2026-11')).counters.eventsBlocked).toBe(0);
    });

    it('counts usage per day, every day of the month up to now listed', async () => {
      await countUsage(store.db, 1, 'dispatchApiCalls', Date.UTC(2026, 10, 2, 23, 59));
      await countUsage(store.db, 1, 'dispatchApiCalls', Date.UTC(2026, 10, 3, 0, 1), 4);
      await countUsage(store.db, 1, 'dispatchApiCalls', Date.UTC(2026, 9, 31, 23, 59));
      const usage = await getUsage(store.db, 1, '2026-11', Date.UTC(2026, 10, 5, 12));
      expect(usage.counters.dispatchApiCalls).toBe(5);
      expect(usage.days.map((d) => [d.day, d.counters.dispatchApiCalls])).toEqual([
        ['2026-11-01', 0],
        ['2026-11-02', 1],
        ['2026-11-03', 4],
        ['2026-11-04', 0],
        ['2026-11-05', 0],
      ]);
      // A past month lists all its days.
      expect((await getUsage(store.db, 1, '2026-10', Date.UTC(2026, 10, 5))).days).toHaveLength(31);
    });

    describe('delivery leases', () => {
      const delivery = (id: string, nextAttemptAt: number, consumerAccountId = 2): NewDelivery =>
        contractDelivery(
          { deliveryId: id, eventId: 'evt_1', subscriptionId: 'sub_1', consumerAccountId },
          nextAttemptAt,
        );

      // As the dispatcher claims: on PostgreSQL one statement with no transaction around it, on
      // SQLite inside one of the group commit's transactions.
      const claim = async (options: ClaimOptions) => {
        const { claimed } =
          store.dialect === 'postgres'
            ? await claimWithContext(store.db, store.dialect, options)
            : await store.transaction((trx) => claimWithContext(trx, store.dialect, options));
        return claimed.map(({ row }) => row);
      };

      for (const perInstallation of [undefined, 3]) {
        it(`gives each due delivery to one worker until its lease expires (${perInstallation === undefined ? 'uncapped' : 'capped'})`, async () => {
          await insertDeliveries(store.db, [
            delivery('d-1', 0),
            delivery('d-2', 0),
            delivery('d-later', 5_000),
          ]);
          const a = await claim({ owner: 'a', now: 1_000, leaseMs: 1_000, limit: 10, perInstallation });
          expect(a.map((d) => d.delivery_id).sort()).toEqual(['d-1', 'd-2']);
          expect(a.every((d) => d.attempt_count === 1)).toBe(true);
          const b = await claim({ owner: 'b', now: 1_500, leaseMs: 1_000, limit: 10, perInstallation });
          expect(b).toEqual([]);
          // Worker a stalls past its lease; b takes over at 2 000.
          const taken = await claim({ owner: 'b', now: 2_000, leaseMs: 1_000, limit: 1, perInstallation });
          expect(taken.length).toBe(1);
          expect(taken[0]!.attempt_count).toBe(2);
          // The stale worker's attempt writes nothing: not the delivery, not the attempt, not usage.
          const stale = await finishAttempt(store, {
            deliveryId: taken[0]!.delivery_id,
            owner: 'a',
            attempt: null,
            update: { dispatch_state: 'accepted' },
            dispatchCountedAt: 2_000,
          });
          expect(stale).toBe(false);
          expect((await getUsage(store.db, 2, '1970-01', 2_000)).counters.dispatchApiCalls).toBe(0);
          const fresh = await finishAttempt(store, {
            deliveryId: taken[0]!.delivery_id,
            owner: 'b',
            attempt: {
              number: 2,
              startedAt: 2_000,
              durationMs: 12,
              outcome: 'accepted',
              statusCode: 204,
              errorCategory: null,
              errorMessage: null,
              responseHeaders: { 'x-github-request-id': 'R1' },
            },
            update: { dispatch_state: 'accepted', next_attempt_at: null },
            dispatchCountedAt: 2_000,
          });
          expect(fresh).toBe(true);
          const row = await getDelivery(store.db, taken[0]!.delivery_id);
          expect([row?.dispatch_state, row?.lease_owner]).toEqual(['accepted', null]);
          const attempts = await listAttempts(store.db, taken[0]!.delivery_id);
          expect(attempts.map((x) => [x.number, x.status_code, x.subscription_id])).toEqual([
            [2, 204, 'sub_1'],
          ]);
          expect((await getUsage(store.db, 2, '1970-01', 2_000)).counters.dispatchApiCalls).toBe(1);
          expect(
            await claim({ owner: 'c', now: 10_000, leaseMs: 1_000, limit: 10, perInstallation }),
          ).toHaveLength(2);
        });
      }

      it("claims across installations in one statement, none beyond an installation's free slots", async () => {
        // Installations 2, 3, 4 and 5 with 4 due deliveries each, due in turn (2, 3, 4, 5, 2, 3…).
        await insertDeliveries(
          store.db,
          Array.from({ length: 16 }, (_, i) => delivery(`d-${i}`, i, 2 + (i % 4))),
        );
        const claimCapped = (
          owner: string,
          limit: number,
          inFlight: Map<number, number>,
          skip: number[] = [],
        ) =>
          claim({
            owner,
            now: 1_000,
            leaseMs: 60_000,
            limit,
            perInstallation: 3,
            inFlight,
            skipAccounts: skip,
          });
        const perAccount = (rows: Array<{ consumer_account_id: number }>) => {
          const counts = new Map<number, number>();
          for (const r of rows)
            counts.set(r.consumer_account_id, (counts.get(r.consumer_account_id) ?? 0) + 1);
          return Object.fromEntries([...counts].sort(([a], [b]) => a - b));
        };
        // The worker has 2 of installation 2's calls in flight, 3 of installation 4's (at its cap,
        // skipped): room for 1 of 2's, 3 of 3's, none of 4's and 3 of 5's, the oldest of each. A
        // claim reads only the oldest few due deliveries, so the dispatcher claims again until a
        // claim finds nothing; its in-flight counts grow with what it took.
        const inFlight = new Map([
          [2, 2],
          [4, 3],
        ]);
        const taken: Array<{ delivery_id: string; consumer_account_id: number }> = [];
        for (let pass = 0; pass < 20; pass++) {
          // As the dispatcher asks: installations at their cap skipped, the others' counts given.
          const free = new Map([...inFlight].filter(([, used]) => used < 3));
          const full = [...inFlight].filter(([, used]) => used >= 3).map(([account]) => account);
          const rows = await claimCapped('a', 10, free, full);
          if (rows.length === 0) break;
          for (const [account, n] of Object.entries(perAccount(rows))) {
            const used = inFlight.get(Number(account)) ?? 0;
            expect(used + n).toBeLessThanOrEqual(3);
            inFlight.set(Number(account), used + n);
          }
          taken.push(...rows);
        }
        expect(perAccount(taken)).toEqual({ 2: 1, 3: 3, 5: 3 });
        expect(taken.map((r) => r.delivery_id).sort()).toEqual(
          ['d-0', 'd-1', 'd-3', 'd-5', 'd-7', 'd-9', 'd-11'].sort(),
        );
        // The limit is of the whole claim, oldest due first.
        const second = await claimCapped('b', 2, new Map());
        expect(second.map((r) => r.delivery_id).sort()).toEqual(['d-2', 'd-4']);
        // Side by side, two workers never take the same delivery, whether their claims are capped or not.
        const both: string[] = [];
        for (let pass = 0; pass < 20; pass++) {
          const [c, d] = await Promise.all([
            claimCapped('c', 16, new Map()),
            claim({ owner: 'd', now: 1_000, leaseMs: 60_000, limit: 16 }),
          ]);
          if (c.length + d.length === 0) break;
          both.push(...[...c, ...d].map((r) => r.delivery_id));
        }
        expect(new Set(both).size).toBe(both.length);
        expect(both.sort()).toEqual(['d-6', 'd-8', 'd-10', 'd-12', 'd-13', 'd-14', 'd-15'].sort());
      });

      it('records attempts finished together, each as if finished alone', async () => {
        // As the dispatcher finishes the calls of one turn: concurrently. On PostgreSQL they share
        // one statement (engine/statement-batches.ts); each must still get its own answer.
        const day1 = Date.UTC(1970, 0, 1, 12);
        const day2 = Date.UTC(1970, 0, 2, 12);
        await insertDeliveries(store.db, [
          delivery('f-lost', 0, 2),
          delivery('f-accepted', 10, 2),
          delivery('f-run', 10, 2),
          delivery('f-seen', 10, 3),
          delivery('f-retry', 10, 3),
          delivery('f-failed', 10, 4),
          delivery('f-paced', 10, 2),
        ]);
        expect(await claim({ owner: 'w', now: 1_000, leaseMs: 1_000, limit: 10 })).toHaveLength(7);
        // Worker w stalls past its lease; x takes the oldest over.
        const taken = await claim({ owner: 'x', now: 2_000, leaseMs: 1_000, limit: 1 });
        expect(taken.map((d) => d.delivery_id)).toEqual(['f-lost']);
        // Completion tracking saw f-seen's workflow run before its dispatch's answer is recorded.
        await store.db
          .updateTable('deliveries')
          .set({ run_seen_at: 2_500 })
          .where('delivery_id', '=', 'f-seen')
          .execute();
        const attempt = (
          outcome: 'accepted' | 'failed',
          statusCode: number | null,
          category: string | null,
        ) => ({
          number: 1,
          startedAt: 2_900,
          durationMs: 7,
          outcome,
          statusCode,
          errorCategory: category,
          errorMessage: category === null ? null : `${category}: no`,
          responseHeaders: statusCode === null ? null : { 'x-github-request-id': `R${statusCode}` },
        });
        const accepted = {
          dispatch_state: 'accepted' as const,
          next_attempt_at: null,
          slot_reserved: false,
          platform_response: '{"status":204}',
          payload_by_reference: true,
          updated_at: 3_000,
        };
        const results = await Promise.all([
          finishAttempt(store, {
            deliveryId: 'f-lost',
            owner: 'w',
            attempt: attempt('accepted', 204, null),
            update: accepted,
            awaitStartSince: 3_000,
            dispatchCountedAt: day1,
          }),
          finishAttempt(store, {
            deliveryId: 'f-accepted',
            owner: 'w',
            attempt: attempt('accepted', 204, null),
            update: accepted,
            awaitStartSince: 3_000,
            dispatchCountedAt: day1,
          }),
          finishAttempt(store, {
            deliveryId: 'f-run',
            owner: 'w',
            attempt: attempt('accepted', 200, null),
            update: {
              ...accepted,
              consumer_run_id: 555,
              consumer_run_url: 'https://api.github.com/runs/555',
              consumer_run_html_url: 'https://github.com/runs/555',
              run_seen_at: 3_000,
              run_follow_at: 9_000,
              run_follow_reads: 0,
            },
            dispatchCountedAt: day1,
          }),
          finishAttempt(store, {
            deliveryId: 'f-seen',
            owner: 'w',
            attempt: attempt('accepted', 204, null),
            update: accepted,
            awaitStartSince: 3_000,
            dispatchCountedAt: day2,
          }),
          finishAttempt(store, {
            deliveryId: 'f-retry',
            owner: 'w',
            attempt: attempt('failed', 502, 'server_error'),
            update: {
              next_attempt_at: 60_000,
              slot_reserved: false,
              retry_number: 1,
              updated_at: 3_000,
              platform_response: '{"status":502}',
            },
            dispatchCountedAt: day2,
          }),
          finishAttempt(store, {
            deliveryId: 'f-failed',
            owner: 'w',
            attempt: attempt('failed', null, 'not_installed'),
            update: {
              dispatch_state: 'failed',
              status: 'Failed',
              next_attempt_at: null,
              failure_reason: 'not installed',
              slot_reserved: false,
              retry_number: 0,
              updated_at: 3_000,
            },
          }),
          finishAttempt(store, {
            deliveryId: 'f-paced',
            owner: 'w',
            attempt: null,
            update: { next_attempt_at: 5_000, slot_reserved: true, attempt_count: 0, updated_at: 3_000 },
          }),
        ]);
        expect(results).toEqual([false, true, true, true, true, true, true]);

        const rows = new Map<string, Record<string, unknown>>();
        for (const id of ['f-lost', 'f-accepted', 'f-run', 'f-seen', 'f-retry', 'f-failed', 'f-paced']) {
          const row = await getDelivery(store.db, id);
          rows.set(id, {
            status: row?.status,
            dispatch_state: row?.dispatch_state,
            attempt_count: row?.attempt_count,
            next_attempt_at: row?.next_attempt_at,
            lease_owner: row?.lease_owner,
            lease_expires_at: row?.lease_expires_at,
            slot_reserved: Boolean(row?.slot_reserved),
            payload_by_reference: Boolean(row?.payload_by_reference),
            retry_number: row?.retry_number,
            platform_response: row?.platform_response,
            failure_reason: row?.failure_reason,
            awaiting_start_since: row?.awaiting_start_since,
            run_seen_at: row?.run_seen_at,
            consumer_run_id: row?.consumer_run_id,
            consumer_run_url: row?.consumer_run_url,
            consumer_run_html_url: row?.consumer_run_html_url,
            run_follow_at: row?.run_follow_at,
            run_follow_reads: row?.run_follow_reads,
            updated_at: row?.updated_at,
          });
        }
        const untouched = {
          status: 'Dispatched',
          dispatch_state: 'pending',
          attempt_count: 1,
          next_attempt_at: 10,
          lease_owner: null,
          lease_expires_at: null,
          slot_reserved: false,
          payload_by_reference: false,
          retry_number: 0,
          platform_response: null,
          failure_reason: null,
          awaiting_start_since: null,
          run_seen_at: null,
          consumer_run_id: null,
          consumer_run_url: null,
          consumer_run_html_url: null,
          run_follow_at: null,
          run_follow_reads: 0,
          updated_at: 10,
        };
        const wasAccepted = {
          ...untouched,
          dispatch_state: 'accepted',
          next_attempt_at: null,
          platform_response: '{"status":204}',
          payload_by_reference: true,
          updated_at: 3_000,
        };
        expect(Object.fromEntries(rows)).toEqual({
          // The stale worker wrote nothing: x's lease and claim stand.
          'f-lost': {
            ...untouched,
            attempt_count: 2,
            next_attempt_at: 0,
            lease_owner: 'x',
            lease_expires_at: 3_000,
            updated_at: rows.get('f-lost')?.updated_at,
          },
          'f-accepted': { ...wasAccepted, awaiting_start_since: 3_000 },
          'f-run': {
            ...wasAccepted,
            run_seen_at: 3_000,
            consumer_run_id: 555,
            consumer_run_url: 'https://api.github.com/runs/555',
            consumer_run_html_url: 'https://github.com/runs/555',
            run_follow_at: 9_000,
          },
          // Its run was seen already: no wait for the workflow to start.
          'f-seen': { ...wasAccepted, run_seen_at: 2_500 },
          'f-retry': {
            ...untouched,
            next_attempt_at: 60_000,
            retry_number: 1,
            platform_response: '{"status":502}',
            updated_at: 3_000,
          },
          'f-failed': {
            ...untouched,
            status: 'Failed',
            dispatch_state: 'failed',
            next_attempt_at: null,
            failure_reason: 'not installed',
            updated_at: 3_000,
          },
          'f-paced': {
            ...untouched,
            attempt_count: 0,
            next_attempt_at: 5_000,
            slot_reserved: true,
            updated_at: 3_000,
          },
        });

        const attempts = await store.db
          .selectFrom('delivery_attempts')
          .select([
            'delivery_id',
            'subscription_id',
            'number',
            'started_at',
            'duration_ms',
            'outcome',
            'status_code',
            'error_category',
            'error_message',
            'response_headers',
          ])
          .orderBy('delivery_id')
          .execute();
        const row = (id: string, outcome: string, status: number | null, category: string | null) => ({
          delivery_id: id,
          subscription_id: 'sub_1',
          number: 1,
          started_at: 2_900,
          duration_ms: 7,
          outcome,
          status_code: status,
          error_category: category,
          error_message: category === null ? null : `${category}: no`,
          response_headers: status === null ? null : JSON.stringify({ 'x-github-request-id': `R${status}` }),
        });
        expect(attempts).toEqual([
          row('f-accepted', 'accepted', 204, null),
          row('f-failed', 'failed', null, 'not_installed'),
          row('f-retry', 'failed', 502, 'server_error'),
          row('f-run', 'accepted', 200, null),
          row('f-seen', 'accepted', 204, null),
        ]);

        // Counted only for updated deliveries GitHub was called for, on the day of the call.
        const calls = async (account: number) =>
          (await getUsage(store.db, account, '1970-01', day2)).days
            .filter((d) => d.counters.dispatchApiCalls > 0)
            .map((d) => [d.day, d.counters.dispatchApiCalls]);
        expect(await calls(2)).toEqual([['1970-01-01', 2]]);
        expect(await calls(3)).toEqual([['1970-01-02', 2]]);
        expect(await calls(4)).toEqual([]);
      });

      it('records two finishes of one delivery asked for together as one after the other', async () => {
        await insertDeliveries(store.db, [delivery('g-1', 0, 2), delivery('g-2', 0, 2)]);
        expect(await claim({ owner: 'w', now: 1_000, leaseMs: 1_000, limit: 10 })).toHaveLength(2);
        const finish = (deliveryId: string, retryNumber: number) =>
          finishAttempt(store, {
            deliveryId,
            owner: 'w',
            attempt: null,
            update: { next_attempt_at: 5_000, retry_number: retryNumber, updated_at: 3_000 },
            dispatchCountedAt: Date.UTC(1970, 0, 1),
          });
        // The first releases the lease, so the second finds it gone: the order they were asked in.
        expect(await Promise.all([finish('g-1', 1), finish('g-2', 1), finish('g-1', 2)])).toEqual([
          true,
          true,
          false,
        ]);
        expect((await getDelivery(store.db, 'g-1'))?.retry_number).toBe(1);
        expect((await getUsage(store.db, 2, '1970-01', 2_000)).counters.dispatchApiCalls).toBe(2);
      });
    });
  });
}

/** A durable delivery of run 77 from account 1's repository 10 to a repository of `consumerAccountId`. */
function contractDelivery(
  ids: { deliveryId: string; eventId: string; subscriptionId: string; consumerAccountId: number },
  now: number,
): NewDelivery {
  return newDeliveryRow(
    {
      ...ids,
      serviceId: 'svc_1',
      providerAccountId: 1,
      providerRepositoryId: 10,
      consumerRepositoryId: ids.consumerAccountId * 10,
      correlationId: '77',
      runAttempt: 1,
      eventType: 'deployed',
      durable: true,
    },
    now,
  );
}
