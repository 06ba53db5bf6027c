/** Ready-to-run operations: GraphiQL opens on them as tabs, the README shows them, tests run each one. */
import { readFileSync } from 'node:fs';

export interface ExampleOperation {
  readonly name: string;
  readonly query: string;
  readonly variables?: Record<string, unknown>;
}

export const SESSION_ID_PLACEHOLDER = '<an update session id of your content library>';

// Beside this module: in src/, and in dist/ where the build copies them.
const document = (file: string) => readFileSync(new URL(`./${file}.graphql`, import.meta.url), 'utf8').trim();
const session = (id: string | undefined) => ({ id: id ?? SESSION_ID_PLACEHOLDER });

/** ids: a session with files of every kind and one whose files are all ready (demo mode's); without, a placeholder. */
export function exampleOperations(ids?: { withFiles: string; ready: string }): readonly ExampleOperation[] {
  return [
    { name: 'Recent logins with their methods', query: document('recent-logins'), variables: { first: 25 } },
    { name: 'Failed logins in a window', query: document('failed-logins'), variables: {} },
    { name: 'Group changes by action', query: document('group-updates'), variables: { action: 'UPDATE', first: 20 } },
    { name: 'Update session files', query: document('update-session-files'), variables: session(ids?.withFiles) },
    { name: 'Update session entity', query: document('update-session'), variables: session(ids?.ready) },
    { name: 'Live audit records', query: document('live-audit-records') },
  ];
}
