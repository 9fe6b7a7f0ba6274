import { type QueryKey, useMutation, useQueryClient } from '@tanstack/react-query';
import { useCallback, useRef } from 'react';
import type { ApiProblem } from '../api/client';
import { asProblem } from './use-query';

export interface Action<A extends unknown[], T> {
  /** Runs the action unless it is already running (a double click sends once); undefined on failure. */
  run(...args: A): Promise<T | undefined>;
  pending: boolean;
  error: ApiProblem | undefined;
  reset(): void;
}

/**
 * A change the user asks for (approve, replay, a switch): one at a time, its failure kept to show.
 * Once it succeeds, the queries it `invalidates` (keys or their leading parts) are read again, and
 * `run` resolves when they are, so what the view shows next is the state after the change.
 */
export function useAction<A extends unknown[], T>(
  perform: (...args: A) => Promise<T>,
  options: { invalidates?: QueryKey[] } = {},
): Action<A, T> {
  const client = useQueryClient();
  const running = useRef(false);
  const performRef = useRef(perform);
  performRef.current = perform;
  const invalidates = useRef(options.invalidates);
  invalidates.current = options.invalidates;
  const mutation = useMutation<T, unknown, A>({
    mutationFn: (args) => performRef.current(...args),
    onSuccess: () => invalidate(client, invalidates.current ?? []),
  });
  const { mutateAsync } = mutation;

  const run = useCallback(
    async (...args: A) => {
      // A ref, not state: two clicks in one frame both see the state before either re-render.
      if (running.current) return undefined;
      running.current = true;
      try {
        return await mutateAsync(args);
      } catch {
        return undefined;
      } finally {
        running.current = false;
      }
    },
    [mutateAsync],
  );

  return {
    run,
    pending: mutation.isPending,
    error: mutation.error === null ? undefined : asProblem(mutation.error),
    reset: mutation.reset,
  };
}

/** Reads again every query whose key starts with one of `keys`. */
export function invalidate(client: ReturnType<typeof useQueryClient>, keys: QueryKey[]): Promise<unknown> {
  return Promise.all(keys.map((queryKey) => client.invalidateQueries({ queryKey })));
}

/** For changes made outside `useAction` (a switch's `onChange`): reads those queries again. */
export function useInvalidate(): (...keys: QueryKey[]) => Promise<unknown> {
  const client = useQueryClient();
  return useCallback((...keys: QueryKey[]) => invalidate(client, keys), [client]);
}
