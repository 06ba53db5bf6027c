/** Puts an incremental (@defer/@stream) response back together, as a client cache would. */
import type { IncrementalPart } from '../clients/incremental-parts.js';

/** Applies incremental parts to the first part's data (2022 incremental format). */
export function assemble(parts: IncrementalPart[]) {
  const data = structuredClone(parts[0]!.data);
  const errors = [...(parts[0]!.errors ?? [])];
  for (const part of parts.slice(1)) {
    errors.push(...(part.errors ?? []));
    for (const item of part.incremental ?? []) {
      errors.push(...(item.errors ?? []));
      if ('items' in item) {
        const list = item.path.slice(0, -1).reduce((at: any, key) => at[key], data);
        if (item.items) list.splice(item.path.at(-1) as number, item.items.length, ...item.items);
      } else if (item.data) {
        Object.assign(item.path.reduce((at: any, key) => at[key], data), item.data);
      }
    }
  }
  return { data, errors };
}
