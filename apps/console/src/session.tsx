import { createContext, useContext } from 'react';
import type { Account, Me } from './api/client';
import { InlineField } from './components/field';
import { setQuery, useLocation } from './router';

export const SessionContext = createContext<Me | null>(null);

/** The logged-in user and the accounts they act for (the shell renders views only with a session). */
export function useSession(): Me {
  const me = useContext(SessionContext);
  if (!me) throw new Error('useSession outside a session');
  return me;
}

/** The account a view works on: `?account=` when it names one of the user's accounts, else the first. */
export function useAccount(): Account {
  const me = useSession();
  const { query } = useLocation();
  const wanted = query.get('account');
  return me.accounts.find((a) => a.login === wanted) ?? me.accounts[0]!;
}

/** Chooses the account of a view (shown only to users of more than one account). */
export function AccountPicker() {
  const me = useSession();
  const account = useAccount();
  if (me.accounts.length < 2) return null;
  return (
    <InlineField label="Account">
      <select
        value={account.login}
        onChange={(event) => setQuery({ account: event.target.value }, { push: true })}
      >
        {me.accounts.map((a) => (
          <option key={a.id} value={a.login}>
            {a.login}
          </option>
        ))}
      </select>
    </InlineField>
  );
}
