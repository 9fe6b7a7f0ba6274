import {
  getAccountByInstallation,
  type InstalledRepository,
  markRepositoriesRemoved,
  markUninstalled,
  setSuspended,
  upsertInstalledAccount,
  upsertRepositories,
} from '../store/accounts.js';
import { countUsage } from '../store/usage.js';
import { addMembership, upsertUser } from '../store/users.js';
import { recordWebhookDelivery } from '../store/webhook-deliveries.js';
import type { WebhookIngestOptions, WebhookOutcome } from './webhook-types.js';

/**
 * `installation` and `installation_repositories` events keep accounts, repositories and the
 * installer's membership in step with GitHub.
 * https://docs.github.com/webhooks/webhook-events-and-payloads#installation
 */
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isId = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/** Installation actions that name the account (and so must carry it). */
const ACCOUNT_ACTIONS = new Set(['created', 'new_permissions_accepted', 'unsuspend']);

export async function applyInstallationEvent(
  options: WebhookIngestOptions,
  delivery: { guid: string; event: string; hookId: number | null },
  payload: Json,
): Promise<WebhookOutcome> {
  const installation = payload.installation;
  if (!isObject(installation) || !isId(installation.id)) {
    return { outcome: 'malformed', detail: 'installation.id is missing' };
  }
  const action = typeof payload.action === 'string' ? payload.action : '';
  const account = installation.account;
  const now = options.clock.now();
  const accountMissing = !isObject(account) || !isId(account.id) || typeof account.login !== 'string';
  // Refused before anything is written: a malformed event must not be remembered as processed.
  if (delivery.event === 'installation' && ACCOUNT_ACTIONS.has(action) && accountMissing) {
    return { outcome: 'malformed', detail: 'installation.account is missing' };
  }

  return options.store.transaction(async (trx): Promise<WebhookOutcome> => {
    if (!(await recordWebhookDelivery(trx, delivery, now))) {
      return { outcome: 'duplicate', detail: `delivery ${delivery.guid} was already processed` };
    }
    const installationId = installation.id as number;
    if (delivery.event === 'installation') {
      switch (action) {
        case 'created':
        case 'new_permissions_accepted':
        case 'unsuspend': {
          if (!isObject(account) || !isId(account.id) || typeof account.login !== 'string') {
            return { outcome: 'malformed', detail: 'installation.account is missing' };
          }
          await upsertInstalledAccount(
            trx,
            {
              accountId: account.id,
              login: account.login,
              type: typeof account.type === 'string' ? account.type : 'User',
              installationId,
            },
            now,
          );
          if (action === 'created') {
            await upsertRepositories(trx, account.id, readRepositories(payload.repositories), now);
            const sender = payload.sender;
            if (isObject(sender) && typeof sender.login === 'string') {
              const user = await upsertUser(
                trx,
                { login: sender.login, githubId: isId(sender.id) ? sender.id : null },
                now,
              );
              await addMembership(trx, user.user_id, account.id, 'installer', now);
            }
          }
          await countUsage(trx, account.id, 'webhookDeliveriesReceived', now);
          return { outcome: 'applied', detail: `installation ${action}` };
        }
        case 'deleted':
          await countAndApply(trx, installationId, now, () => markUninstalled(trx, installationId, now));
          return { outcome: 'applied', detail: 'installation deleted' };
        case 'suspend':
          await countAndApply(trx, installationId, now, () => setSuspended(trx, installationId, true, now));
          return { outcome: 'applied', detail: 'installation suspended' };
        default:
          return { outcome: 'ignored', detail: `installation.${action} needs no action` };
      }
    }
    const known = await getAccountByInstallation(trx, installationId);
    if (!known) {
      return {
        outcome: 'ignored',
        detail: `installation ${installationId} is unknown (its created event never arrived)`,
      };
    }
    if (action === 'added') {
      await upsertRepositories(trx, known.account_id, readRepositories(payload.repositories_added), now);
    } else if (action === 'removed') {
      const ids = readRepositories(payload.repositories_removed).map((r) => r.repositoryId);
      await markRepositoriesRemoved(trx, known.account_id, ids, now);
    } else {
      return { outcome: 'ignored', detail: `installation_repositories.${action} needs no action` };
    }
    await countUsage(trx, known.account_id, 'webhookDeliveriesReceived', now);
    return { outcome: 'applied', detail: `repositories ${action}` };
  });
}

async function countAndApply(
  trx: Parameters<typeof getAccountByInstallation>[0],
  installationId: number,
  now: number,
  apply: () => Promise<void>,
): Promise<void> {
  const account = await getAccountByInstallation(trx, installationId);
  await apply();
  if (account) await countUsage(trx, account.account_id, 'webhookDeliveriesReceived', now);
}

function readRepositories(value: unknown): InstalledRepository[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).flatMap((repository) => {
    if (!isId(repository.id) || typeof repository.full_name !== 'string') return [];
    const name =
      typeof repository.name === 'string' ? repository.name : (repository.full_name.split('/')[1] ?? '');
    return [
      {
        repositoryId: repository.id,
        fullName: repository.full_name,
        name,
        private: repository.private === true,
      },
    ];
  });
}
