/** Calls served, by route and by outcome, so tests can see what the gateway really asked for. */
import type { SimulatorCounters, SimulatorRoute } from './types.js';

export class CallCounters {
  private state = CallCounters.empty();

  private static empty(): SimulatorCounters {
    return { token: 0, tokenByGrant: {}, audit: 0, session: 0, files: 0, unauthorized: 0, byStatus: {} };
  }

  /** A call reached a route (counted whatever its outcome). */
  call(route: SimulatorRoute): void {
    this.state[route]++;
  }

  grant(grantType: string): void {
    this.state.tokenByGrant[grantType] = (this.state.tokenByGrant[grantType] ?? 0) + 1;
  }

  /** An answer was written with this status. */
  answered(status: number): void {
    const key = String(status);
    this.state.byStatus[key] = (this.state.byStatus[key] ?? 0) + 1;
    if (status === 401) this.state.unauthorized++;
  }

  snapshot(): SimulatorCounters {
    return structuredClone(this.state);
  }

  reset(): void {
    this.state = CallCounters.empty();
  }
}
