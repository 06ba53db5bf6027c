/** Subscription.auditEventAdded: the types; the streams come from src/audit/live (one poller per filter). */
import { subscribeLive, type LiveItem } from '../../audit/live/index.js';
import type { AuditRecord } from '../../upstream/identity/schemas.js';
import { builder } from './builder.js';
import { AuditActionEnum } from './audit-events.js';
import { checkObjectTypeCase } from '../../audit/paging/object-types.js';
import { AuditEventUnion } from './audit/record-types.js';

const AuditLiveFilterInput = builder.inputType('AuditLiveFilter', {
  description: 'Which audit records a live subscription delivers. One upstream poller serves every subscription of the same filter.',
  fields: (t) => ({
    objectType: t.string({
      description:
        'Upstream objectType, case-sensitive, e.g. LOGIN, LOGIN_ERROR, Group. A known type in another case (login) is BAD_USER_INPUT; other values are passed on as given.',
    }),
    action: t.field({ type: AuditActionEnum, description: 'Further filter by action, for the types that take one.' }),
  }),
});

const AuditLiveEventRef = builder.objectRef<Extract<LiveItem, { record: AuditRecord }>>('AuditLiveEvent').implement({
  description: 'One live audit record, with the token that continues the stream right after it.',
  fields: (t) => ({
    resumeAfter: t.string({
      description: 'Opaque; pass it as `resumeAfter` to continue after this record.',
      resolve: (event) => event.resumeAfter(),
    }),
    node: t.field({ type: AuditEventUnion, description: 'The audit record.', resolve: (event) => event.record }),
  }),
});

builder.subscriptionType({
  description:
    'Live audit records. Every record that the identity service reports for the filter is\n' +
    'delivered exactly once, oldest first, also when it is ingested late (up to the settle\n' +
    'time) and across reconnects that pass the last `resumeAfter`.',
});

builder.subscriptionField('auditEventAdded', (t) =>
  t.field({
    type: AuditLiveEventRef,
    description:
      'Audit records as the identity service reports them, in the order the gateway learns of them (within one poll: oldest first). Without `since` or `resumeAfter`: the records stamped after the subscription started.',
    args: {
      filter: t.arg({ type: AuditLiveFilterInput, description: 'Which records; default: all of them.' }),
      since: t.arg({ type: 'DateTime', description: 'Replay from this time (at most 15 minutes back), then continue live.' }),
      resumeAfter: t.arg.string({
        description: 'The `resumeAfter` of the last record a client received: continue right after it.',
      }),
    },
    subscribe: (_root, args, context) => {
      checkObjectTypeCase(args.filter?.objectType, 'filter.objectType');
      return subscribeLive(context, { ...args, callerId: context.caller.id });
    },
    resolve: (item: LiveItem) => {
      if (item.error) throw item.error;
      return item;
    },
  }),
);
