/**
 * Typed readings of an audit record's `values` object (type-dependent, open-ended): each returns
 * null (or an empty list) rather than guessing when a value is absent or of another type.
 */

/** `values.success`: the string "true"/"false" as the upstream sends it, or a real boolean. */
export function booleanValue(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  const text = value.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : null;
}

export function stringValue(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * `values.authMethods` split into its labels. Labels are comma-delimited, but a label may hold
 * commas inside its parentheses ("RSA SecurID (Token, PIN)"), so only top-level commas split.
 */
export function authMethodLabels(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  const labels: string[] = [];
  let depth = 0;
  let from = 0;
  // Stryker disable next-line EqualityOperator: the code past the end is NaN, which is no parenthesis or comma
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 40 /* ( */) depth++;
    else if (c === 41 /* ) */) depth = Math.max(0, depth - 1);
    else if (c === 44 /* , */ && depth === 0) {
      pushLabel(labels, value.slice(from, i));
      from = i + 1;
    }
  }
  pushLabel(labels, value.slice(from));
  return labels;
}

function pushLabel(labels: string[], raw: string): void {
  const label = raw.trim();
  if (label.length > 0) labels.push(label);
}
