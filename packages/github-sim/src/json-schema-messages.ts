/**
 * Renders a value the way GitHub's request validation quotes it in `Invalid request.` messages
 * (Ruby's `inspect`): `nil` for null/absent, quoted strings, JSON for the rest.
 *
 * @example inspectValue('{"a":1}') // '"{\\"a\\":1}"'
 */
export function inspectValue(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  return JSON.stringify(value);
}

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', integer: 'an integer' };

/** `For 'properties/event_type', 5 is not a string.` */
export function notOfType(pointer: string, value: unknown, type: string): string {
  return `For '${pointer}', ${inspectValue(value)} is not ${ARTICLE[type] ?? `a ${type}`}.`;
}

/** `"event_type" wasn't supplied.` */
export function notSupplied(property: string): string {
  return `"${property}" wasn't supplied.`;
}

/** `Only 100 characters are allowed; 101 were supplied.` */
export function tooLong(max: number, length: number): string {
  return `Only ${max} character${max === 1 ? ' is' : 's are'} allowed; ${length} ${length === 1 ? 'was' : 'were'} supplied.`;
}

/** `At least 1 character is required; only 0 were supplied.` */
export function tooShort(min: number, length: number): string {
  return `At least ${min} character${min === 1 ? ' is' : 's are'} required; only ${length} ${length === 1 ? 'was' : 'were'} supplied.`;
}

/** `No more than 10 properties are allowed; 11 were supplied.` */
export function tooManyProperties(max: number, count: number): string {
  return `No more than ${max} propert${max === 1 ? 'y is' : 'ies are'} allowed; ${count} ${count === 1 ? 'was' : 'were'} supplied.`;
}
