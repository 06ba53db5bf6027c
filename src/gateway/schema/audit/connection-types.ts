/** The filter input, the action enum and the window type of the auditEvents connection. */
import { builder } from '../builder.js';
import type { AuditWindowShape } from './connection-result.js';

export const AuditActionEnum = builder.enumType('AuditAction', {
  description: 'The action filter; sent to the upstream in its own spelling (Create, Update, ...).',
  values: {
    CREATE: { value: 'Create', description: 'Object created.' },
    UPDATE: { value: 'Update', description: 'Object updated.' },
    DELETE: { value: 'Delete', description: 'Object deleted.' },
    LINK: { value: 'Link', description: 'Object linked.' },
    UNLINK: { value: 'Unlink', description: 'Object unlinked.' },
  } as const,
});

export const AuditEventFilterInput = builder.inputType('AuditEventFilter', {
  description: 'Which audit records a connection covers. Repeat it (or leave it out) when paging with a cursor.',
  fields: (t) => ({
    from: t.field({ type: 'DateTime', description: 'Oldest time included. Default: 72 hours before `to`.' }),
    to: t.field({
      type: 'DateTime',
      description: 'Newest time included. Default, and upper limit: the time the first page is read.',
    }),
    objectType: t.string({
      description:
        'Upstream objectType, case-sensitive, e.g. LOGIN, LAUNCH, Group. A known type in another case (login) is BAD_USER_INPUT; other values are passed on as given.',
    }),
    action: t.field({ type: AuditActionEnum, description: 'Further filter by action, for the types that take one.' }),
  }),
});

export const AuditWindowRef = builder.objectRef<AuditWindowShape>('AuditWindow').implement({
  description: 'The time window (both ends included) every cursor of a connection is pinned to.',
  fields: (t) => ({
    from: t.expose('from', { type: 'DateTime', description: 'Oldest time included.' }),
    to: t.expose('to', { type: 'DateTime', description: 'Newest time included: `filter.to`, or the time of the first page.' }),
  }),
});
