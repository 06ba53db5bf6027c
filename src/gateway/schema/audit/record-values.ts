/**
 * Typed readings of an audit record's `values` object (type-dependent, open-ended): each returns
 * null (or an empty list) rather than guessing when a value is absent or of another type.
 */

/** `values.success`: the string "true"/"false" as the upstream sends it, or a real boolean. */
export function booleanValue(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : null;
  return text === 'true' ? true : text === 'false' ? false : null;
}

export const stringValue = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * `values.authMethods` split into its labels. Labels are comma-delimited, but a label may hold
 * commas inside its parentheses ("RSA SecurID (Token, PIN)"), so only top-level commas split.
 */
export function authMethodLabels(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  const labels: string[] = [];
  let depth = 0;
  let from = 0;
  for (const { 0: c, index } of value.matchAll(/[(),]/g)) {
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) {
      labels.push(value.slice(from, index));
      from = index + 1;
    }
  }
  labels.push(value.slice(from));
  return labels.map((label) => label.trim()).filter((label) => label.length > 0);
}
