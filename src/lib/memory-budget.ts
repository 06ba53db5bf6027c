/**
 * The memory budget every request, WebSocket message and operation of a process holds its share
 * of (what the HTTP server admits, src/server/http-server.ts; what parsed requests and subscriptions
 * keep, src/gateway/plugins/limits/held-requests.ts), and the share each HTTP request holds.
 */
import type { IncomingMessage } from 'node:http';
import { ByteReservations, type ByteHolding } from './byte-reservations.js';

/** Holdings this small are not counted: at most MAX_CONNECTIONS of them (64 MB at the default 4096). */
export const SMALL_BODY_BYTES = 16 * 1024;

export const createMemoryBudget = (maxBytes: number) => new ByteReservations(maxBytes, SMALL_BODY_BYTES);

const requestHoldings = new WeakMap<IncomingMessage, ByteHolding>();

/** The share of the memory budget an HTTP request holds until its answer has left (undefined: not served here). */
export const requestHolding = (request: IncomingMessage): ByteHolding | undefined => requestHoldings.get(request);

export const holdForRequest = (request: IncomingMessage, holding: ByteHolding): void => void requestHoldings.set(request, holding);
