/**
 * The soak's live side: subscribers over SSE and WebSocket on a few filters, each ending its
 * connection now and then (abruptly: an aborted request, a terminated socket) and coming back with
 * the `resumeAfter` of the last record it received. The records come from the soak itself, inserted
 * into the simulator under objectTypes no seeded record has; the insert answers are the ledger each
 * subscriber's deliveries are checked against: every record once, none missing.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { request } from 'undici';
import WebSocket from 'ws';
import { API_KEY } from './processes.js';

const LIVE = /* GraphQL */ `
  subscription SoakLive($filter: AuditLiveFilter, $since: DateTime, $resumeAfter: String) {
    auditEventAdded(filter: $filter, since: $since, resumeAfter: $resumeAfter) {
      resumeAfter
      node { ... on AuditRecord { uuid timestamp objectType } }
    }
  }
`;

/** A socket cut while still connecting reports it as an 'error' event: expected here, not a crash. */
class CuttableWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    this.on('error', () => {});
  }
}

/** `since` reaches back 15 minutes at most. */
const SINCE_REACH_MS = 14 * 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface LivePayload {
  data?: { auditEventAdded?: { resumeAfter: string; node: { uuid: string } } } | null;
  errors?: readonly { message: string; extensions?: { code?: unknown } }[];
}

interface Subscriber {
  readonly objectType: string;
  readonly transport: 'sse' | 'ws';
  token: string | undefined;
  readonly received: Map<string, number>;
  /** Ends the current connection abruptly. */
  cut: (() => void) | undefined;
}

export interface LiveTally {
  connections: number;
  resumes: number;
  abruptEnds: number;
  /** Streams ended by the gateway with an error, by code ('(no code)' without one). */
  readonly endings: Record<string, number>;
  /** Connections that failed before any answer (gateway unreachable, refused upgrade ...). */
  transportFailures: number;
  codeless: number;
}

interface LedgerEntry {
  readonly uuid: string;
  readonly objectType: string;
}

/** A code for whatever a client library threw: GraphQL errors, a close event, an HTTP refusal. */
function codesOf(error: unknown): string[] {
  if (Array.isArray(error)) return error.map((e: { extensions?: { code?: unknown } }) => (typeof e.extensions?.code === 'string' ? e.extensions.code : '(no code)'));
  if (error && typeof error === 'object' && 'code' in error && typeof (error as { code: unknown }).code === 'number') return [`close ${(error as { code: number }).code}`];
  if (!(error instanceof Error)) return [`transport: ${String(error).slice(0, 60)}`];
  const cause = (error.cause as { code?: unknown } | undefined)?.code;
  return [`transport: ${error.message.slice(0, 60)}${typeof cause === 'string' ? ` (${cause})` : ''}`];
}

export interface LiveOptions {
  readonly gatewayUrl: string;
  readonly objectTypes: readonly string[];
  readonly subscribersPerFilter: number;
  /** Each connection is cut after a random time between these, ms. */
  readonly cutAfterMs: readonly [number, number];
}

export function createLive(options: LiveOptions) {
  const startedAt = Date.now();
  const tally: LiveTally = { connections: 0, resumes: 0, abruptEnds: 0, endings: {}, transportFailures: 0, codeless: 0 };
  const subscribers: Subscriber[] = [];
  const ledger: LedgerEntry[] = [];
  /** Records the upstream lost before the gateway could read them (taken away by a restart). */
  const lostUpstream = new Set<string>();
  let stopping = false;
  const loops: Promise<void>[] = [];

  const variables = (s: Subscriber) => ({
    filter: { objectType: s.objectType },
    ...(s.token ? { resumeAfter: s.token } : { since: new Date(Math.max(startedAt, Date.now() - SINCE_REACH_MS)).toISOString() }),
  });

  const deliver = (s: Subscriber, payload: LivePayload): boolean => {
    const event = payload.data?.auditEventAdded;
    if (event) {
      s.received.set(event.node.uuid, (s.received.get(event.node.uuid) ?? 0) + 1);
      s.token = event.resumeAfter;
    }
    for (const error of payload.errors ?? []) {
      const code = typeof error.extensions?.code === 'string' ? error.extensions.code : '(no code)';
      if (code === '(no code)') tally.codeless++;
      tally.endings[code] = (tally.endings[code] ?? 0) + 1;
    }
    return (payload.errors?.length ?? 0) > 0;
  };

  /** One connection, until the gateway ends it, it fails, or it is cut. */
  async function connectOnce(s: Subscriber): Promise<void> {
    tally.connections++;
    let cut = false;
    let iterator: AsyncIterableIterator<LivePayload>;
    let ws: WsClient | undefined;
    if (s.transport === 'sse') {
      const client = createSseClient({ url: `${options.gatewayUrl}/graphql`, headers: { 'x-api-key': API_KEY }, retryAttempts: 0 });
      iterator = client.iterate({ query: LIVE, variables: variables(s) }) as AsyncIterableIterator<LivePayload>;
      s.cut = () => {
        cut = true;
        void iterator.return?.();
      };
    } else {
      ws = createWsClient({
        url: `${options.gatewayUrl.replace(/^http/, 'ws')}/graphql`,
        webSocketImpl: CuttableWebSocket,
        connectionParams: { 'x-api-key': API_KEY },
        retryAttempts: 0,
        lazy: true,
      });
      iterator = ws.iterate({ query: LIVE, variables: variables(s) }) as AsyncIterableIterator<LivePayload>;
      const client = ws;
      s.cut = () => {
        cut = true;
        client.terminate();
      };
    }
    const [least, most] = options.cutAfterMs;
    const timer = setTimeout(() => s.cut?.(), least + Math.random() * (most - least));
    try {
      for await (const payload of iterator) if (deliver(s, payload)) break;
    } catch (error) {
      if (!cut) {
        for (const code of codesOf(error)) {
          if (code.startsWith('transport') || code.startsWith('close')) tally.transportFailures++;
          if (code === '(no code)') tally.codeless++;
          tally.endings[code] = (tally.endings[code] ?? 0) + 1;
        }
      }
    } finally {
      clearTimeout(timer);
      s.cut = undefined;
      if (cut) tally.abruptEnds++;
      await ws?.dispose();
    }
  }

  async function run(s: Subscriber): Promise<void> {
    while (!stopping) {
      await connectOnce(s);
      if (stopping) break;
      tally.resumes++;
      await sleep(300 + Math.random() * 1200);
    }
  }

  return {
    tally,
    start(): void {
      for (const [index, objectType] of options.objectTypes.entries()) {
        for (let i = 0; i < options.subscribersPerFilter; i++) {
          const s: Subscriber = { objectType, transport: (index + i) % 2 === 0 ? 'sse' : 'ws', token: undefined, received: new Map(), cut: undefined };
          subscribers.push(s);
          loops.push(run(s));
        }
      }
    },
    /** Inserts one record of the next filter into the simulator, stamped now or `lateMs` ago; false when the simulator did not take it. */
    async insert(simulatorUrl: string, objectType: string, lateMs = 0): Promise<boolean> {
      const timestamp = lateMs > 0 ? Math.max(startedAt + 1, Date.now() - lateMs) : undefined;
      try {
        const res = await request(`${simulatorUrl}/__simulator/insert-events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ count: 1, objectType, ...(timestamp ? { timestamp } : {}) }),
          headersTimeout: 5000,
          bodyTimeout: 5000,
        });
        if (res.statusCode !== 200) {
          await res.body.dump();
          return false;
        }
        const { events } = (await res.body.json()) as { events: { uuid: string; objectType: string }[] };
        for (const event of events) ledger.push({ uuid: event.uuid, objectType: event.objectType });
        return true;
      } catch {
        return false;
      }
    },
    /** Ledger records some subscriber of their filter has not received yet. */
    undelivered(): Set<string> {
      const waiting = new Set<string>();
      for (const entry of ledger) {
        if (lostUpstream.has(entry.uuid)) continue;
        if (subscribers.some((s) => s.objectType === entry.objectType && !s.received.has(entry.uuid))) waiting.add(entry.uuid);
      }
      return waiting;
    },
    /** Waits (at most `ms`) until every subscriber has every record of its filter; true if they all have. */
    async settle(ms: number): Promise<boolean> {
      const deadline = Date.now() + ms;
      while (this.undelivered().size > 0) {
        if (Date.now() > deadline) return false;
        await sleep(250);
      }
      return true;
    },
    /** The records the upstream is about to lose (a restart): not counted as missing. */
    excuse(uuids: Iterable<string>): void {
      for (const uuid of uuids) lostUpstream.add(uuid);
    },
    async stop(): Promise<void> {
      stopping = true;
      for (const s of subscribers) s.cut?.();
      await Promise.race([Promise.all(loops), sleep(10_000)]);
    },
    /** Delivered, duplicated (deliveries past the first) and missing records, over every subscriber. */
    figures() {
      let delivered = 0;
      let duplicated = 0;
      let missing = 0;
      const known = new Set(ledger.map((e) => e.uuid));
      let foreign = 0;
      for (const s of subscribers) {
        for (const entry of ledger) {
          if (entry.objectType !== s.objectType) continue;
          const count = s.received.get(entry.uuid) ?? 0;
          delivered += count;
          duplicated += Math.max(0, count - 1);
          if (count === 0 && !lostUpstream.has(entry.uuid)) missing++;
        }
        for (const uuid of s.received.keys()) if (!known.has(uuid)) foreign++;
      }
      return { subscribers: subscribers.length, inserted: ledger.length, delivered, duplicated, missing, lostUpstream: lostUpstream.size, foreign };
    },
  };
}
