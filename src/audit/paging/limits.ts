export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 5000;
/** Largest pageSize the audit report accepts in one call (spec 8). */
export const UPSTREAM_MAX_PAGE_SIZE = 5000;
/** `from` defaults to this long before `to` (the upstream's documented default window). */
export const DEFAULT_WINDOW_MS = 72 * 60 * 60 * 1000;
/** objectType values are short identifiers; anything longer is a mistake, and it rides in every cursor. */
export const MAX_OBJECT_TYPE_LENGTH = 100;
/** Offsets beyond this are no real position (keeps offset arithmetic exact in doubles). */
export const MAX_OFFSET = 2 ** 48;
