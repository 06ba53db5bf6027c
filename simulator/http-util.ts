/** Small HTTP helpers: answers as values, bounded body reading, credential parsing. */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** What a handler decides; the server writes it (after latency), counting it on the way. */
export interface Answer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | string[]>>;
  readonly body: string;
}

/** What a handler sees of a request: already parsed, body read. */
export interface RequestContext {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export const JSON_TYPE = 'application/json;charset=UTF-8';

export function jsonAnswer(status: number, value: unknown, headers: Record<string, string | string[]> = {}): Answer {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body: JSON.stringify(value) };
}

/** A JSON body already serialized (or deliberately broken). */
export function rawJsonAnswer(status: number, body: string, headers: Record<string, string | string[]> = {}): Answer {
  return { status, headers: { 'content-type': JSON_TYPE, ...headers }, body };
}

export const MAX_BODY_BYTES = 1024 * 1024;

export class BodyTooLargeError extends Error {}

/** Reads the whole body as UTF-8; rejects past MAX_BODY_BYTES rather than buffering without end. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLargeError('request body too large'));
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    // A client that goes away mid-body never sends 'end'.
    req.on('close', () => {
      if (!req.complete) reject(new Error('request aborted'));
    });
  });
}

export interface BasicCredentials {
  readonly user: string;
  readonly password: string;
}

/** Parses `Authorization: Basic ...`; undefined when absent or not Basic or not `user:password`. */
export function basicCredentials(headers: IncomingHttpHeaders): BasicCredentials | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(headers.authorization ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const part of (headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A single header value (the first when repeated). */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Strict integer parsing for query parameters: digits only, optional minus, safe range. */
export function parseInteger(text: string): number | undefined {
  if (!/^-?\d{1,16}$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}
