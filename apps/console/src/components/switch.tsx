import { useState } from 'react';
import { useAction } from '../hooks/use-action';
import { InlineError } from './states';

/** The look and semantics of a switch (`role=switch`, labelled); what pressing it does is the caller's. */
export function SwitchButton(props: {
  label: string;
  checked: boolean;
  pending?: boolean;
  disabled?: boolean;
  text: string;
  describedBy?: string | undefined;
  onClick: () => void;
}) {
  return (
    <button
      type="button"
      role="switch"
      className="switch"
      aria-checked={props.checked}
      aria-label={props.label}
      aria-busy={props.pending ?? false}
      aria-describedby={props.describedBy}
      disabled={props.disabled || props.pending}
      onClick={props.onClick}
    >
      <span className="switch-track" aria-hidden="true">
        <span className="switch-thumb" />
      </span>
      <span className="switch-text">{props.pending ? 'Saving…' : props.text}</span>
    </button>
  );
}

/**
 * An on/off switch that saves at once: it shows the new position while the request runs (and
 * cannot be pressed again meanwhile), and goes back to where it was, saying why, when the request
 * fails. `onChange` resolves once the change is saved and what it made stale is read again.
 */
export function Switch(props: {
  label: string;
  checked: boolean;
  onChange: (next: boolean) => Promise<unknown>;
  id: string;
  disabled?: boolean;
  /** Text beside the switch, e.g. "Webhook placed". */
  stateText?: (checked: boolean) => string;
}) {
  const [wanted, setWanted] = useState<boolean | undefined>();
  const action = useAction(async (next: boolean) => {
    setWanted(next);
    try {
      await props.onChange(next);
    } finally {
      setWanted(undefined);
    }
  });
  const shown = wanted ?? props.checked;
  const errorId = `${props.id}-error`;
  return (
    <div className="switch-field">
      <SwitchButton
        label={props.label}
        checked={shown}
        pending={action.pending}
        disabled={props.disabled ?? false}
        text={props.stateText?.(shown) ?? (shown ? 'On' : 'Off')}
        describedBy={action.error ? errorId : undefined}
        onClick={() => void action.run(!props.checked)}
      />
      <InlineError error={action.error} id={errorId} />
    </div>
  );
}
