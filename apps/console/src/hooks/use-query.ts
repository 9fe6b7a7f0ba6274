import { type QueryKey, useQuery as useTanStackQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiProblem } from '../api/client';

export interface Query<T> {
  data: T | undefined;
  error: ApiProblem | undefined;
  /** Loading for the first time, or again because the user asked (Retry, Load older); not polling. */
  loading: boolean;
  /** When the data shown was loaded. */
  updatedAt: Date | undefined;
  reload(): void;
}

/**
 * Loads data for a view and keeps it fresh. `key` names what is loaded (its first element the
 * kind, so a change can invalidate every query of that kind): when it changes the view loads
 * again. With `pollMs` the data is read again on that interval while the tab is visible: the
 * console's live updates (Delivery Status, My Connections).
 */
export function useQuery<T>(
  key: QueryKey,
  load: () => Promise<T>,
  options: { pollMs?: number } = {},
): Query<T> {
  const query = useTanStackQuery<T, unknown>({
    queryKey: key,
    queryFn: load,
    ...(options.pollMs ? { refetchInterval: options.pollMs } : {}),
  });
  // A reload the user asked for shows as loading; a poll or an invalidation refreshes quietly.
  const [reloading, setReloading] = useState(false);
  return {
    data: query.data,
    error: query.error === null ? undefined : asProblem(query.error),
    loading: query.isPending || (reloading && query.isFetching),
    updatedAt: query.dataUpdatedAt ? new Date(query.dataUpdatedAt) : undefined,
    reload: () => {
      setReloading(true);
      void query.refetch().finally(() => setReloading(false));
    },
  };
}

export function asProblem(error: unknown): ApiProblem {
  return error instanceof ApiProblem
    ? error
    : new ApiProblem(0, 'error', 'Something went wrong', String(error));
}
