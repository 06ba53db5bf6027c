/** The memory budget each request, WebSocket message and operation holds a share of. */
import type { IncomingMessage } from 'node:http';
import { ByteReservations, type ByteHolding } from './byte-reservations.js';

/** Holdings this small are not counted: MAX_CONNECTIONS bounds how many there are. */
export const SMALL_BODY_BYTES = 16 * 1024;

export const createMemoryBudget = (maxBytes: number) => new ByteReservations(maxBytes, SMALL_BODY_BYTES);

const requestHoldings = new WeakMap<IncomingMessage, ByteHolding>();

/** The share of the memory budget an HTTP request holds until its answer has left (undefined: not served here). */
export const requestHolding = (request: IncomingMessage): ByteHolding | undefined => requestHoldings.get(request);

export const holdForRequest = (request: IncomingMessage, holding: ByteHolding): void => void requestHoldings.set(request, holding);
