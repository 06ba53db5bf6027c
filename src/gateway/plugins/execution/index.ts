/** How an operation runs: row errors, graphql-jit for audit pages, @defer/@stream, its deadline, live audit. */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { Plugin } from 'graphql-yoga';
import { useLiveAudit, type LiveAudit } from '../../../audit/live/index.js';
import { useOperationDeadline } from '../../context.js';
import { useRowErrors } from './audit-row-errors.js';
import { useJitForAuditPages } from '../compat/jit.js';

export function executionPlugins(liveAudit: LiveAudit): Plugin[] {
  return [
    useRowErrors(),
    useJitForAuditPages(),
    // @defer/@stream over multipart/mixed and SSE (text/event-stream), per the client's Accept.
    useDeferStream(),
    useOperationDeadline() as Plugin,
    useLiveAudit(liveAudit),
  ];
}
