import { userAccount } from './logins.js';
import type { SimContext } from './sim-context.js';
import { SimNotFoundError } from './sim-input-error.js';
import type { AccountRecord, InstallationRecord } from './sim-state.js';

/**
 * Who may access which installation, by GitHub's rule for `GET /user/installations`: installations
 * on accounts the user "has explicit permission (:read, :write, or :admin) to access" — their own
 * account, and organisations they are a member of.
 * https://docs.github.com/rest/apps/installations#list-app-installations-accessible-to-the-user-access-token
 */

function organization(ctx: SimContext, login: string): AccountRecord {
  const account = ctx.state.accounts.get(String(login).toLowerCase());
  if (account === undefined || account.type !== 'Organization') {
    throw new SimNotFoundError(`no organisation ${JSON.stringify(login)}`);
  }
  return account;
}

/** Records that `user` is a member of `org` (only users can be members). */
export function addMembership(ctx: SimContext, org: AccountRecord, user: AccountRecord): void {
  if (org.type !== 'Organization' || user.type !== 'User') return;
  let members = ctx.state.orgMembers.get(org.id);
  if (members === undefined) {
    members = new Set();
    ctx.state.orgMembers.set(org.id, members);
  }
  members.add(user.id);
}

/** `addOrgMember`: the organisation must exist; the user is created when unknown. */
export function addOrgMember(ctx: SimContext, org: string, login: string): void {
  const account = organization(ctx, org);
  addMembership(ctx, account, userAccount(ctx, login, 'login'));
}

/** `removeOrgMember`: the user loses access to the organisation's installation. */
export function removeOrgMember(ctx: SimContext, org: string, login: string): void {
  const account = organization(ctx, org);
  ctx.state.orgMembers.get(account.id)?.delete(userAccount(ctx, login, 'login').id);
}

export function canAccessInstallation(
  ctx: SimContext,
  user: AccountRecord,
  installation: InstallationRecord,
): boolean {
  const { account } = installation;
  if (account.id === user.id) return true;
  return account.type === 'Organization' && (ctx.state.orgMembers.get(account.id)?.has(user.id) ?? false);
}

/** The live installations of the App the user can access, in the order they were created. */
export function installationsOfUser(ctx: SimContext, user: AccountRecord): InstallationRecord[] {
  return [...ctx.state.installations.values()].filter(
    (installation) => !installation.deleted && canAccessInstallation(ctx, user, installation),
  );
}
