/** Ready-to-run operations: GraphiQL opens on them and the README shows them. Tests run every one. */
import { auditEventExamples } from './audit-events.js';
import { updateSessionExamples } from './update-sessions.js';

export interface ExampleOperation {
  readonly name: string;
  readonly query: string;
  readonly variables?: Record<string, unknown>;
}

export const exampleOperations: readonly ExampleOperation[] = [...auditEventExamples, ...updateSessionExamples];
