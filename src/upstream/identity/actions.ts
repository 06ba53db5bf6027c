/** The audit report's action filter values, in the upstream's own spelling (spec 4.2). */
export const UPSTREAM_ACTIONS = ['Create', 'Update', 'Delete', 'Link', 'Unlink'] as const;
export type UpstreamAction = (typeof UPSTREAM_ACTIONS)[number];
