/**
 * The lease that picks the one replica polling the upstream for a live filter, and the stream it
 * appends what it reads to. The lease is a key set with `NX PX` (its expiry: two thirds of
 * AUDIT_LIVE_LEASE_MS, see SharedFeed) and renewed while held; appending checks the lease and adds to the stream in one Lua script, so a former
 * holder that wakes up after a pause, its lease taken over, cannot append (fenced). Both keys
 * carry the filter's hash tag `{…}`, so the scripts also run on a Redis Cluster.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { SharedStore } from './store.js';

/** KEYS: lease. ARGV: token, lease ms. 1 when the lease is still this holder's, now renewed. */
const RENEW_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
/**
 * KEYS: lease. ARGV: token, lease ms. 1 when the lease is now this holder's: free, or holding a
 * value without expiry (none the gateway writes: another program's, which would block the filter
 * for ever otherwise).
 */
const ACQUIRE_SCRIPT = `
if redis.call('pttl', KEYS[1]) == -1 then redis.call('del', KEYS[1]) end
if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;
/** KEYS: lease. ARGV: token. */
const RELEASE_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
/**
 * KEYS: lease, stream. ARGV: token, the oldest stream id worth keeping, then the entries. The
 * stream's ids of the entries appended, or false when the lease is not this holder's (nothing
 * appended). Entries older than that id are trimmed (`MINID ~`: whole nodes, cheaply). Another
 * program's value under the stream's key is replaced: it would stop every replica's reads.
 */
const FENCED_APPEND_SCRIPT = `
if redis.call('get', KEYS[1]) ~= ARGV[1] then return false end
local kind = redis.call('type', KEYS[2])['ok']
if kind ~= 'stream' and kind ~= 'none' then redis.call('del', KEYS[2]) end
local ids = {}
for i = 3, #ARGV do
  ids[#ids + 1] = redis.call('xadd', KEYS[2], 'MINID', '~', ARGV[2], '*', 'r', ARGV[i])
end
return ids`;

export type AppendOutcome =
  | { readonly outcome: 'appended'; readonly ids: readonly string[] }
  /** The lease is no longer this holder's: another replica polls the filter now. */
  | { readonly outcome: 'fenced' }
  | { readonly outcome: 'unavailable' };

export class FilterLease {
  readonly leaseKey: string;
  readonly streamKey: string;
  readonly #store: SharedStore;
  readonly #expiryMs: number;
  readonly #token = randomBytes(12).toString('base64url');

  /** `filter`: a text that identifies the filter (the same on every replica); `expiryMs`: the key's, from each renewal. */
  constructor(store: SharedStore, filter: string, expiryMs: number) {
    this.#store = store;
    this.#expiryMs = expiryMs;
    const tag = createHash('sha256').update(filter).digest('base64url').slice(0, 22);
    this.leaseKey = store.key(`live:{${tag}}:lease`);
    this.streamKey = store.key(`live:{${tag}}:stream`);
  }

  /** Takes the lease if nobody holds it; true when this holder has it (taken or held already). */
  async acquire(): Promise<boolean> {
    if (await this.renew()) return true;
    return (await this.#store.script(ACQUIRE_SCRIPT, [this.leaseKey], [this.#token, this.#expiryMs])) === 1;
  }

  /** Extends the lease by its expiry; false when it is no longer this holder's (or Redis is away). */
  async renew(): Promise<boolean> {
    return (await this.#store.script(RENEW_SCRIPT, [this.leaseKey], [this.#token, this.#expiryMs])) === 1;
  }

  async release(): Promise<void> {
    await this.#store.script(RELEASE_SCRIPT, [this.leaseKey], [this.#token]);
  }

  /**
   * Appends `entries` in order if the lease is still this holder's; entries appended before
   * `keepSinceMs` (Redis's clock, as stream ids are) may be trimmed.
   */
  async append(entries: readonly string[], keepSinceMs: number): Promise<AppendOutcome> {
    const minId = `${Math.max(0, Math.floor(keepSinceMs))}-0`;
    const answer = await this.#store.script(FENCED_APPEND_SCRIPT, [this.leaseKey, this.streamKey], [this.#token, minId, ...entries]);
    if (answer === undefined) return { outcome: 'unavailable' };
    if (answer === null) return { outcome: 'fenced' };
    return { outcome: 'appended', ids: answer as string[] };
  }
}
