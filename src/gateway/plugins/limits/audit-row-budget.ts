/** Audit rows and update sessions are the expense: a budget of rows per operation, and few large operations at once. */
import { GraphQLError, Kind, type ValueNode } from 'graphql';
import type { ServerResponse } from 'node:http';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { DEFAULT_PAGE_SIZE } from '../../../audit/paging/limits.js';
import { Turns, type GiveBack } from '../../../lib/turns.js';
import type { OperationDeadline } from '../../../upstream/deadline.js';
import { analysisOf, limitVariables } from './document-analysis.js';

interface AuditRowLimits {
  readonly maxRows: number;
  readonly largeOperationRows: number;
  readonly largeOperationSessions: number;
  readonly largeOperationConcurrency: number;
  readonly largeAnswerStallMs: number;
}

/** The Node response under Node's HTTP server (Yoga's server context); absent under `yoga.fetch`. */
type NodeResponse = Pick<ServerResponse, 'closed' | 'once' | 'setTimeout'>;

function pageSize(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (value?.kind === Kind.INT) return Number(value.value);
  const given = value?.kind === Kind.VARIABLE ? variables[value.name.value] : undefined;
  return typeof given === 'number' ? given : 0;
}

/** Representations in a literal list or a list variable; anything else coerces to a list of one. */
function representationCount(value: ValueNode | undefined, variables: Record<string, unknown>): number {
  if (value?.kind === Kind.LIST) return value.values.length;
  const given = value?.kind === Kind.VARIABLE ? variables[value.name.value] : undefined;
  return Array.isArray(given) ? given.length : 1;
}

/** Sums per response key: execution merges the fields of one key (validation made their arguments equal). */
function sumByKey<T extends { readonly key: string }>(sites: readonly T[], count: (site: T) => number): number {
  const byKey = new Map<string, number>();
  for (const site of sites) byKey.set(site.key, Math.max(count(site), byKey.get(site.key) ?? 0));
  return [...byKey.values()].reduce((sum, value) => sum + value, 0);
}

export function useAuditRowLimits(limits: AuditRowLimits): Plugin<{ request: Request; res?: NodeResponse; deadline?: OperationDeadline | undefined }> {
  const turns = new Turns(limits.largeOperationConcurrency);
  const turnsHeld = new WeakMap<Request, GiveBack>();

  return {
    // Synchronous unless the operation waits for a turn: most operations pay no extra tick.
    onExecute({ args, setResultAndStopExecution }) {
      const analysis = analysisOf(args.document, args.operationName);
      if (analysis?.operation.operation !== 'query') return;
      const raw = (args.variableValues ?? {}) as Record<string, unknown>;
      const sessions = sumByKey(analysis.sessions, (site) => representationCount(site.representations, raw));
      const variables = analysis.pages.length > 0 ? limitVariables(args, analysis) : raw;
      if (variables === null) return;
      const rows = sumByKey(analysis.pages, ({ first, last }) => Math.max(pageSize(first, variables), pageSize(last, variables)) || DEFAULT_PAGE_SIZE);
      if (rows > limits.maxRows) {
        const message = `The operation asks for ${rows} audit rows; at most ${limits.maxRows} are served per operation. Page through them instead.`;
        return setResultAndStopExecution({ errors: [new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })] });
      }
      if (rows <= limits.largeOperationRows && sessions <= limits.largeOperationSessions) return;
      const { request, res, deadline } = args.contextValue;
      // Past its deadline it runs without a turn: its upstream reads fail at once, so it holds no rows.
      return turns.take(deadline?.signal ?? request.signal).then((giveBack) => {
        if (!giveBack) return;
        turnsHeld.set(request, giveBack);
        // No Node response to watch (WebSocket, `yoga.fetch`): the request's signal says when it is over.
        if (!res) request.signal.addEventListener('abort', giveBack, { once: true });
        return {
          // Under `yoga.fetch` an incremental answer gives its turn back with its last part.
          onExecuteDone: ({ result }) => {
            if (res || !isAsyncIterable(result)) return;
            turnsHeld.delete(request);
            return { onEnd: giveBack };
          },
        };
      });
    },
    onResponse({ request, serverContext }) {
      const giveBack = turnsHeld.get(request);
      if (!giveBack) return;
      turnsHeld.delete(request);
      const res = (serverContext as { res?: NodeResponse }).res;
      if (!res) return giveBack();
      // Held until the answer has left; the stall timeout once the adapter has started sending (which clears it).
      setImmediate(() => res.closed || res.setTimeout(limits.largeAnswerStallMs));
      if (res.closed) giveBack();
      else res.once('close', giveBack);
    },
  };
}
