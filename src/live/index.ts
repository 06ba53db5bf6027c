/** Live audit records: `Subscription.auditEventAdded` (see README "Live audit records"). */
export { LiveAudit, RateLimitedError, type LiveAuditOptions, type LiveAuditStats, type LiveSubscribeArgs } from './hub.js';
export { liveAuditOf, useLiveAudit } from './plugin.js';
export type { LiveItem } from './subscriber.js';
