import { type Account, allPages, api, ok, type Repository } from '../api/client';
import { useQuery } from '../hooks/use-query';

/** Every repository of an account's installation, with its provider and COMPLETION flags. */
export function useRepositories(account: Account) {
  return useQuery(['repositories', { account: account.login }], () => loadRepositories(account.login));
}

export function loadRepositories(account: string): Promise<Repository[]> {
  return allPages(async (cursor) => {
    const page = await ok(
      api.GET('/api/v1/accounts/{account}/repositories', {
        params: { path: { account }, query: { limit: '100', ...(cursor ? { cursor } : {}) } },
      }),
    );
    return { items: page.repositories, nextCursor: page.nextCursor };
  });
}

/** Repositories of all the user's accounts (choosing a repository to deliver to, or a provider repository). */
export function loadAllRepositories(accounts: Account[]): Promise<Repository[]> {
  return Promise.all(accounts.map((a) => loadRepositories(a.login))).then((lists) => lists.flat());
}

export function splitName(fullName: string): { owner: string; repo: string } {
  const [owner = '', repo = ''] = fullName.split('/');
  return { owner, repo };
}
