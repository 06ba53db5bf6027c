/**
 * Live audit subscriptions: the gateway's CPU (utime + stime from /proc/<pid>/stat) with 1,000 idle
 * subscribers, and per event fanned out to all 1,000. Each subscriber has a WebSocket connection
 * of its own (graphql-ws), the costliest way to hold 1,000 of them; all share one filter, hence
 * one poller, whose upstream calls are counted in the simulator.
 */
import { readFileSync } from 'node:fs';
import { createClient, type Client } from 'graphql-ws';
import { request } from 'undici';
import WebSocket from 'ws';
import { API_KEY, type GatewayChild } from './processes.js';
import { simulatorCounters } from './scenarios.js';

export interface LiveResult {
  readonly subscribers: number;
  readonly pollMs: number;
  /** CPU of the gateway at rest, without and with the subscribers, in ms per second. */
  readonly idleCpuMsPerSecond: { readonly none: number; readonly subscribers: number };
  /** Upstream audit calls per second while the subscribers idle (one poller). */
  readonly idleUpstreamCallsPerSecond: number;
  readonly events: number;
  /** Extra gateway CPU for one event delivered to every subscriber (idle cost subtracted), ms. */
  readonly fanOutCpuMsPerEvent: number;
  /** From insertion upstream until the last subscriber has it (mostly the poll interval), ms. */
  readonly deliveryMs: { readonly p50: number; readonly max: number };
}

export const LIVE_ENV = { AUDIT_LIVE_POLL_MS: '500', AUDIT_LIVE_MAX_SUBSCRIPTIONS: '1000' };

const SUBSCRIPTION = /* GraphQL */ `
  subscription Bench {
    auditEventAdded(filter: { objectType: "BenchEvent" }) {
      resumeAfter
      node { ... on AuditRecord { uuid timestamp objectType } }
    }
  }
`;

const TICKS_PER_SECOND = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** utime + stime of a process, in ms. */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // Fields 14 and 15 of stat (utime, stime); index 0 here is field 3.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

async function cpuRate(pid: number, ms: number): Promise<number> {
  const before = cpuMsOf(pid);
  await sleep(ms);
  return ((cpuMsOf(pid) - before) * 1000) / ms;
}

export async function liveScenario(
  gateway: GatewayChild,
  simulatorUrl: string,
  options: { subscribers: number; idleMs: number; events: number; log: (text: string) => void },
): Promise<LiveResult> {
  const { subscribers, idleMs, events, log } = options;
  const idleNone = await cpuRate(gateway.pid, idleMs);

  const received = new Map<string, number>();
  const arrivals = new Map<string, number>();
  const clients: Client[] = [];
  const wsUrl = `${gateway.url.replace('http', 'ws')}/graphql`;
  let acknowledged = 0;
  const subscribe = () => {
    const client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      connectionParams: { 'x-api-key': API_KEY },
      retryAttempts: 0,
      lazy: true,
      on: { connected: () => void acknowledged++ },
    });
    clients.push(client);
    client.subscribe<{ auditEventAdded: { node: { uuid: string } } }>(
      { query: SUBSCRIPTION },
      {
        next: (value) => {
          const uuid = value.data?.auditEventAdded.node.uuid;
          if (!uuid) return;
          const count = (received.get(uuid) ?? 0) + 1;
          received.set(uuid, count);
          if (count === subscribers) arrivals.set(uuid, Date.now());
        },
        error: (error) => log(`live subscriber error: ${error instanceof Error ? error.message : String((error as { code?: unknown }).code ?? JSON.stringify(error))}`),
        complete: () => {},
      },
    );
  };
  // Connected in batches, as clients arrive in practice: 1,000 at once would only test the accept backlog.
  const deadline = Date.now() + 120_000;
  for (let opened = 0; opened < subscribers; ) {
    const batch = Math.min(50, subscribers - opened);
    for (let i = 0; i < batch; i++) subscribe();
    opened += batch;
    while (acknowledged < opened) {
      if (Date.now() > deadline) throw new Error(`only ${acknowledged} of ${subscribers} subscribers connected`);
      await sleep(20);
    }
  }
  // Let subscriptions settle in before measuring rest.
  await sleep(1000);
  const countersBefore = await simulatorCounters(simulatorUrl);
  const idleSubscribers = await cpuRate(gateway.pid, idleMs);
  const countersAfter = await simulatorCounters(simulatorUrl);

  const delivery: number[] = [];
  let fanOutCpu = 0;
  for (let i = 0; i < events; i++) {
    const cpuBefore = cpuMsOf(gateway.pid);
    const started = Date.now();
    const res = await request(`${simulatorUrl}/__simulator/insert-events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ count: 1, objectType: 'BenchEvent' }),
    });
    const { events: inserted } = (await res.body.json()) as { events: { uuid: string }[] };
    const uuid = inserted[0]!.uuid;
    while (!arrivals.has(uuid)) {
      if (Date.now() - started > 30_000) throw new Error(`event reached ${received.get(uuid) ?? 0} of ${subscribers} subscribers`);
      await sleep(5);
    }
    const elapsed = Date.now() - started;
    delivery.push(arrivals.get(uuid)! - started);
    fanOutCpu += cpuMsOf(gateway.pid) - cpuBefore - (idleSubscribers * elapsed) / 1000;
  }
  await Promise.all(clients.map((client) => client.dispose()));
  delivery.sort((a, b) => a - b);
  return {
    subscribers,
    pollMs: Number(LIVE_ENV.AUDIT_LIVE_POLL_MS),
    idleCpuMsPerSecond: { none: idleNone, subscribers: idleSubscribers },
    idleUpstreamCallsPerSecond: ((countersAfter.audit - countersBefore.audit) * 1000) / idleMs,
    events,
    fanOutCpuMsPerEvent: fanOutCpu / events,
    deliveryMs: { p50: delivery[Math.floor(delivery.length / 2)]!, max: delivery.at(-1)! },
  };
}

export function formatLive(r: LiveResult): string {
  return [
    `live audit: ${r.subscribers} subscribers (one WebSocket each, one filter), poll every ${r.pollMs} ms`,
    `  idle CPU: ${r.idleCpuMsPerSecond.none.toFixed(1)} ms/s without subscribers, ${r.idleCpuMsPerSecond.subscribers.toFixed(1)} ms/s with them` +
      ` (${((r.idleCpuMsPerSecond.subscribers / 1000) * 100).toFixed(1)} % of a core); upstream ${r.idleUpstreamCallsPerSecond.toFixed(1)} calls/s`,
    `  one event to all ${r.subscribers}: ${r.fanOutCpuMsPerEvent.toFixed(1)} ms CPU (idle subtracted), delivered to the last subscriber` +
      ` in p50 ${r.deliveryMs.p50} ms, max ${r.deliveryMs.max} ms (${r.events} events)`,
  ].join('\n');
}
