import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import type { Plugin } from 'graphql-yoga';
import type { LiveAudit } from '../../../audit/live/index.js';
import { useOperationDeadline } from '../../context.js';
import { useRowErrors } from './audit-row-errors.js';
import { useLiveAudit } from './live-audit.js';
import { useJitForAuditPages } from '../compat/jit.js';

export function executionPlugins(liveAudit: LiveAudit): Plugin[] {
  return [
    useRowErrors(),
    useJitForAuditPages(),
    useDeferStream(),
    useOperationDeadline() as Plugin,
    useLiveAudit(liveAudit),
  ];
}
