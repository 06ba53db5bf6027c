/** Ready-to-run operations: GraphiQL opens on them and the README shows them. Tests run every one. */
import { auditEventExamples } from './audit-events.js';
import { liveAuditExamples } from './live-audit.js';
import type { ExampleOperation } from './example-operation.js';
import { updateSessionExamples, type ExampleSessionIds } from './update-sessions.js';

export type { ExampleOperation, ExampleSessionIds };

/** The examples are indented template literals; the editor should show them flush left. */
function dedent(text: string): string {
  const lines = text.replace(/^\s*\n/, '').trimEnd().split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  return lines.map((l) => l.slice(indent)).join('\n');
}

/**
 * Every example. Update sessions are only known to their service: given ids (demo mode hands in
 * the simulator's) the examples run as they are, otherwise they ask for an id of your own.
 */
export function exampleOperations(sessionIds?: ExampleSessionIds): readonly ExampleOperation[] {
  return [...auditEventExamples, ...updateSessionExamples(sessionIds), ...liveAuditExamples].map((op) => ({ ...op, query: dedent(op.query) }));
}
