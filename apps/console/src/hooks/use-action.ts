import { useCallback, useRef, useState } from 'react';
import { ApiProblem } from '../api/client';

export interface Action<A extends unknown[], T> {
  /** Runs the action unless it is already running (a double click sends once); undefined on failure. */
  run(...args: A): Promise<T | undefined>;
  pending: boolean;
  error: ApiProblem | undefined;
  reset(): void;
}

/** A change the user asks for (approve, replay, a switch): one at a time, its failure kept to show. */
export function useAction<A extends unknown[], T>(perform: (...args: A) => Promise<T>): Action<A, T> {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiProblem | undefined>();
  const running = useRef(false);
  const performRef = useRef(perform);
  performRef.current = perform;

  const run = useCallback(async (...args: A) => {
    // A ref, not state: two clicks in one frame both see the state before either re-render.
    if (running.current) return undefined;
    running.current = true;
    setPending(true);
    setError(undefined);
    try {
      return await performRef.current(...args);
    } catch (failure) {
      setError(
        failure instanceof ApiProblem
          ? failure
          : new ApiProblem(0, 'error', 'Something went wrong', String(failure)),
      );
      return undefined;
    } finally {
      running.current = false;
      setPending(false);
    }
  }, []);

  return { run, pending, error, reset: () => setError(undefined) };
}
