/** The fault switches tests flip: queued failures, latency, malformed answers, refused refreshes. */
import type { HostileKind, MalformKind, SimulatorRoute } from './types.js';
import { DEFAULT_OVERSIZE_BYTES, RECORD_KINDS, type PlannedHostility } from './hostile.js';

export interface PlannedFailure {
  readonly status: number;
  readonly retryAfterSeconds?: number | undefined;
}

interface QueuedFailure extends PlannedFailure {
  readonly route: SimulatorRoute | undefined;
  remaining: number;
}

interface QueuedMalform {
  remaining: number;
  readonly kind: MalformKind | undefined;
}

/** setTimeout treats anything above this as 1 ms; a "hung" upstream must stay hung. */
export const MAX_DELAY_MS = 2 ** 31 - 1;

function assertCount(count: number, what: string): void {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`${what} must be a non-negative integer`);
}

export class FaultSwitches {
  private failures: QueuedFailure[] = [];
  private globalLatency = 0;
  private readonly routeLatency = new Map<SimulatorRoute, number>();
  private readonly malforms = new Map<SimulatorRoute, QueuedMalform[]>();
  /** Alternates shape/truncated per route when no kind was asked for. */
  private readonly malformServed = new Map<SimulatorRoute, number>();
  private refusals = 0;
  private readonly hostile = new Map<SimulatorRoute, (PlannedHostility & { remaining: number })[]>();
  private inconsistent = 0;

  failNext(count: number, status: number, route?: SimulatorRoute, retryAfterSeconds?: number): void {
    assertCount(count, 'count');
    if (!Number.isInteger(status) || status < 100 || status > 599) throw new RangeError('status must be an HTTP status code');
    if (retryAfterSeconds !== undefined && (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0)) {
      throw new RangeError('retryAfterSeconds must be a non-negative integer');
    }
    if (count > 0) this.failures.push({ route, status, retryAfterSeconds, remaining: count });
  }

  /** The failure this call must answer with, if one is queued for its route (first queued first). */
  takeFailure(route: SimulatorRoute): PlannedFailure | undefined {
    const index = this.failures.findIndex((f) => f.route === undefined || f.route === route);
    const failure = this.failures[index];
    if (!failure) return undefined;
    failure.remaining--;
    if (failure.remaining === 0) this.failures.splice(index, 1);
    return failure;
  }

  /** Without a route: every route; `setLatency(0)` without a route clears every latency. */
  setLatency(ms: number, route?: SimulatorRoute): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('latency must be a non-negative number of ms');
    const bounded = Math.min(Math.round(ms), MAX_DELAY_MS);
    if (route === undefined) {
      this.globalLatency = bounded;
      if (bounded === 0) this.routeLatency.clear();
    } else if (bounded === 0) this.routeLatency.delete(route);
    else this.routeLatency.set(route, bounded);
  }

  latencyFor(route: SimulatorRoute): number {
    return Math.max(this.globalLatency, this.routeLatency.get(route) ?? 0);
  }

  malformNext(route: SimulatorRoute, count: number, kind?: MalformKind): void {
    assertCount(count, 'count');
    if (count === 0) return;
    const queue = this.malforms.get(route) ?? [];
    queue.push({ remaining: count, kind });
    this.malforms.set(route, queue);
  }

  takeMalform(route: SimulatorRoute): MalformKind | undefined {
    const queue = this.malforms.get(route);
    const head = queue?.[0];
    if (!queue || !head) return undefined;
    head.remaining--;
    if (head.remaining === 0) queue.shift();
    const served = this.malformServed.get(route) ?? 0;
    this.malformServed.set(route, served + 1);
    return head.kind ?? (served % 2 === 0 ? 'shape' : 'truncated');
  }

  hostileNext(route: SimulatorRoute, kind: HostileKind, count: number, bytes = DEFAULT_OVERSIZE_BYTES): void {
    assertCount(count, 'count');
    if (RECORD_KINDS.has(kind) && route !== 'audit') throw new RangeError(`${kind} applies to the audit route only`);
    if (!Number.isInteger(bytes) || bytes < 16 || bytes > 1024 ** 3) throw new RangeError('bytes must be between 16 and 2^30');
    if (count === 0) return;
    const queue = this.hostile.get(route) ?? [];
    queue.push({ kind, bytes, remaining: count });
    this.hostile.set(route, queue);
  }

  takeHostile(route: SimulatorRoute): PlannedHostility | undefined {
    const head = this.hostile.get(route)?.[0];
    if (!head) return undefined;
    if (--head.remaining === 0) this.hostile.get(route)!.shift();
    return head;
  }

  inconsistentPages(count: number): void {
    assertCount(count, 'count');
    this.inconsistent += count;
  }

  takeInconsistentPage(): boolean {
    if (this.inconsistent === 0) return false;
    this.inconsistent--;
    return true;
  }

  refuseRefresh(count: number): void {
    assertCount(count, 'count');
    this.refusals += count;
  }

  takeRefusal(): boolean {
    if (this.refusals === 0) return false;
    this.refusals--;
    return true;
  }

  clear(): void {
    this.failures = [];
    this.globalLatency = 0;
    this.routeLatency.clear();
    this.malforms.clear();
    this.malformServed.clear();
    this.refusals = 0;
    this.hostile.clear();
    this.inconsistent = 0;
  }
}
