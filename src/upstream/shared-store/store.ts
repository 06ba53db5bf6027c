/** The state replicas share in Redis (REDIS_URL): an accelerator, never a dependency; a failed or late call is a miss. */
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisConfig } from '../../lib/config.js';

const ENVELOPE_VERSION = 'gw1';
/** Compare-and-delete: a lock is released only by the holder whose token it still carries. */
const RELEASE_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
/** Stream entries one blocking read brings at most: a reader far behind catches up in slices. */
const READ_COUNT = 1000;
const MAX_RECONNECT_DELAY_MS = 2000;

/** While disconnected a call fails at once (a miss) instead of queueing behind the reconnection. */
function connect(url: string, timeoutMs: number, commandTimeout: number): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout,
    connectTimeout: Math.max(timeoutMs, 1000),
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 6), MAX_RECONNECT_DELAY_MS),
  });
}

/** A stream entry as ioredis answers it: its id, then field, value, field, value... */
export type StreamEntry = [id: string, fields: string[]];

export type BlockingReader = ReturnType<SharedStore['blockingReader']>;

export class SharedStore {
  readonly timeoutMs: number;
  readonly #client: Redis;
  readonly #config: RedisConfig;
  readonly #log: Logger;
  readonly #where: string;
  #up: boolean | undefined;
  #closed = false;

  constructor(config: RedisConfig, log: Logger) {
    this.#config = config;
    this.timeoutMs = config.timeoutMs;
    this.#log = log;
    // Host and port only: the URL may carry a password.
    const url = new URL(config.url);
    this.#where = `${url.hostname}:${url.port || '6379'}`;
    this.#client = connect(config.url, config.timeoutMs, config.timeoutMs);
    this.#client.on('ready', () => this.#markUp());
    this.#client.on('close', () => this.#markDown('connection closed'));
    // ioredis reports each failed attempt; the outage is logged once, by #markDown.
    this.#client.on('error', (error: Error) => {
      if (this.#up !== false) this.#markDown(error.message);
    });
  }

  /** Whether Redis answered last (the gauge gateway_redis_up). */
  isUp(): boolean {
    return this.#up === true;
  }

  key(name: string): string {
    return this.#config.keyPrefix + name;
  }

  /** undefined: absent, not the gateway's, or Redis not answering. */
  async get(key: string, kind: string): Promise<string | undefined> {
    return this.open(key, kind, await this.#call((client) => client.get(key)));
  }

  async set(key: string, kind: string, payload: string, ttlMs: number): Promise<boolean> {
    return (await this.#call((client) => client.set(key, this.seal(key, kind, payload), 'PX', ttlMs))) === 'OK';
  }

  /** A short lock (`SET NX PX`), gone after `ttlMs` at the latest; unavailable: go on as without Redis. */
  async lock(key: string, ttlMs: number) {
    const token = randomBytes(12).toString('base64url');
    const answer = await this.#call((client) => client.set(key, token, 'PX', ttlMs, 'NX'));
    if (answer === 'OK') return { outcome: 'acquired', token } as const;
    return answer === null ? ({ outcome: 'held' } as const) : ({ outcome: 'unavailable' } as const);
  }

  async unlock(key: string, token: string): Promise<void> {
    await this.#call((client) => client.eval(RELEASE_SCRIPT, 1, key, token));
  }

  /** Runs a Lua script on `keys` (all in one hash slot); undefined when Redis did not answer. */
  async script(source: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.#call((client) => client.eval(source, keys.length, ...keys, ...args));
  }

  /** A value as `get` expects it, for values written other than by `set` (stream entries). */
  seal(key: string, kind: string, payload: string): string {
    return `${ENVELOPE_VERSION}:${kind}:${checksum(key, kind, payload)}:${payload}`;
  }

  /** The payload of a sealed value, or undefined when the gateway did not write it there. */
  open(key: string, kind: string, stored: unknown): string | undefined {
    const head = `${ENVELOPE_VERSION}:${kind}:`;
    if (typeof stored !== 'string' || !stored.startsWith(head)) return undefined;
    const sumEnd = stored.indexOf(':', head.length);
    const payload = stored.slice(sumEnd + 1);
    return sumEnd > 0 && stored.slice(head.length, sumEnd) === checksum(key, kind, payload) ? payload : undefined;
  }

  /** Entries after `afterId` (exclusive); undefined when Redis did not answer. */
  async streamAfter(key: string, afterId: string, count: number): Promise<StreamEntry[] | undefined> {
    return this.#call((client) => client.xrange(key, `(${afterId}`, '+', 'COUNT', count));
  }

  /** The id of a stream's oldest entry: null when it is empty or absent, undefined when Redis did not answer. */
  async streamFirstId(key: string): Promise<string | null | undefined> {
    const first = await this.#call((client) => client.xrange(key, '-', '+', 'COUNT', 1));
    return first === undefined ? undefined : (first[0]?.[0] ?? null);
  }

  /** A connection of its own for blocking stream reads (`XREAD BLOCK`), which would hold up the shared one. */
  blockingReader(blockMs: number) {
    const client = connect(this.#config.url, this.#config.timeoutMs, blockMs + this.#config.timeoutMs);
    // Outages are logged by the shared connection; this one only reconnects.
    client.on('error', () => undefined);
    return {
      /** Entries after `afterId`, waiting up to `blockMs`: [] when none came, undefined when Redis did not answer. */
      async read(key: string, afterId: string): Promise<StreamEntry[] | undefined> {
        if (client.status !== 'ready') return undefined;
        try {
          const answer = await client.xread('COUNT', READ_COUNT, 'BLOCK', blockMs, 'STREAMS', key, afterId);
          return answer?.[0]?.[1] ?? [];
        } catch {
          return undefined;
        }
      },
      close: () => client.disconnect(),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#client.disconnect();
  }

  async #call<T>(command: (client: Redis) => Promise<T>): Promise<T | undefined> {
    if (this.#closed || this.#client.status !== 'ready') return undefined;
    try {
      const answer = await command(this.#client);
      this.#markUp();
      return answer;
    } catch (error) {
      // A timeout means Redis stalls though connected: an outage as much as a closed connection.
      if (error instanceof Error && /timed out/i.test(error.message)) this.#markDown('call timed out');
      else this.#log.debug({ redis: this.#where, err: error }, 'Redis call failed');
      return undefined;
    }
  }

  #markUp(): void {
    if (this.#up === true || this.#closed) return;
    if (this.#up === false) this.#log.info({ redis: this.#where }, 'Redis is reachable again: shared state is back in use');
    this.#up = true;
  }

  #markDown(reason: string): void {
    if (this.#up === false || this.#closed) return;
    this.#up = false;
    this.#log.warn(
      { redis: this.#where, reason },
      'Redis is unreachable: each replica works on its own (upstream reads, local caches) until it is back',
    );
  }
}

function checksum(key: string, kind: string, payload: string): string {
  return createHash('sha256').update(`${key}\n${kind}\n`).update(payload).digest('base64url').slice(0, 22);
}

export function createSharedStore(config: RedisConfig | undefined, log: Logger): SharedStore | undefined {
  return config ? new SharedStore(config, log) : undefined;
}
