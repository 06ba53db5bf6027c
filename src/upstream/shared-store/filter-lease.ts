/** The lease that picks the one replica polling a live filter, and its stream, fenced: a script checks and appends. */
import { createHash, randomBytes } from 'node:crypto';
import type { SharedStore } from './store.js';

/** KEYS: lease. ARGV: token, lease ms. 1 when the lease is still this holder's, now renewed. */
const RENEW_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
/** KEYS: lease. ARGV: token, lease ms. 1 when now this holder's; a value without expiry is another program's, taken over. */
const ACQUIRE_SCRIPT = `
if redis.call('pttl', KEYS[1]) == -1 then redis.call('del', KEYS[1]) end
if redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;
/** KEYS: lease, stream. ARGV: token, the oldest id kept, the entries. The ids appended, or false when the lease is another's. */
const FENCED_APPEND_SCRIPT = `
if redis.call('get', KEYS[1]) ~= ARGV[1] then return false end
local kind = redis.call('type', KEYS[2])['ok']
if kind ~= 'stream' and kind ~= 'none' then redis.call('del', KEYS[2]) end
local ids = {}
for i = 3, #ARGV do
  ids[#ids + 1] = redis.call('xadd', KEYS[2], 'MINID', '~', ARGV[2], '*', 'r', ARGV[i])
end
return ids`;

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
    await this.#store.unlock(this.leaseKey, this.#token);
  }

  /** Appends unless fenced (another replica holds the lease); entries older than `keepSinceMs` (Redis's clock) may go. */
  async append(entries: readonly string[], keepSinceMs: number) {
    const minId = `${Math.max(0, Math.floor(keepSinceMs))}-0`;
    const answer = await this.#store.script(FENCED_APPEND_SCRIPT, [this.leaseKey, this.streamKey], [this.#token, minId, ...entries]);
    if (answer === undefined) return { outcome: 'unavailable' } as const;
    if (answer === null) return { outcome: 'fenced' } as const;
    return { outcome: 'appended', ids: answer as readonly string[] } as const;
  }
}
