/** Keeps new audit events coming (demo mode), so a live subscription has something to show. */
import type { SimulatorControl } from './types.js';

/** Inserts one event, stamped now, every `intervalMs`; returns the function that stops it. */
export function startEventTicker(control: SimulatorControl, intervalMs: number): () => void {
  const timer = setInterval(() => control.insertEvents(1), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
