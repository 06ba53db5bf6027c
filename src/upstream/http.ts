/** One upstream call: credentials, exchange, retries, status mapping, validation, one log line, within one deadline. */
import { isAscii } from 'node:buffer';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { ByteHolding, ByteReservations } from '../lib/byte-reservations.js';
import { CallerGoneError, UpstreamError, type UpstreamService } from '../lib/errors.js';
import type { CredentialLease, SharedCredential } from './credentials.js';
import { createDeadline, untilAborted, type Deadline } from './deadline.js';
import {
  errorForAnswerBytes,
  errorForFailure,
  errorForInvalidBody,
  errorForStatus,
  errorTypeIn,
  forgetEchoedCredentials,
  summarizeIssues,
  type RefusalMapping,
} from './error-mapping.js';
import { backoffMs, errorCodeOf, isRetryableConnectionError, retryableStatuses, retryAfterMs, type RetryPolicy } from './retry.js';
import { emit, type CallOptions, type UpstreamCallEvent, type UpstreamEvents, type UpstreamTracer } from './types.js';

export interface UpstreamRequest<T> extends RefusalMapping {
  readonly method: 'GET' | 'POST';
  /** Below the base URL's path, without a query string. */
  readonly path: string;
  /** Sent, never logged. */
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Credentials in the body (a refresh token): kept out of the log like those in headers. */
  readonly secrets?: readonly (string | undefined)[];
  readonly schema: z.ZodType<T>;
  /** A cheaper check for a hot route, accepting only what `schema` returns unchanged: no zod copy. */
  readonly accepts?: (json: unknown) => json is T;
  /** What the shape cannot say (more rows than asked): a problem it names is UPSTREAM_INVALID_RESPONSE. */
  readonly check?: (answer: T) => string | undefined;
  readonly credentials?: SharedCredential<object | string> | undefined;
}

export interface UpstreamHttpOptions {
  readonly service: UpstreamService;
  /** Its path, if any, prefixes every request path. */
  readonly baseUrl: string;
  readonly dispatcher: Dispatcher;
  /** The process's bound on answer bytes being read: an answer counts against it until parsed. */
  readonly answerBytes: ByteReservations;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly events?: UpstreamEvents | undefined;
  readonly tracer?: UpstreamTracer | undefined;
}

interface Progress {
  status: number | undefined;
  retries: number;
  credentialRetry: boolean;
  lease?: CredentialLease | undefined;
}

export class UpstreamHttp {
  readonly service: UpstreamService;
  readonly #origin: string;
  readonly #address: string;
  readonly #basePath: string;

  constructor(private readonly options: UpstreamHttpOptions) {
    const url = new URL(options.baseUrl);
    this.service = options.service;
    this.#origin = url.origin;
    this.#address = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
    this.#basePath = url.pathname.replace(/\/+$/, '');
  }

  request<T>(request: UpstreamRequest<T>, call: CallOptions) {
    const tracer = this.options.tracer;
    if (!tracer) return this.#request(request, call);
    const start = { service: this.service, route: request.route, method: request.method };
    return tracer.traceCall(start, (end) => this.#request(request, call, end));
  }

  async #request<T>(request: UpstreamRequest<T>, call: CallOptions, traceEnd?: (event: UpstreamCallEvent) => void) {
    const started = performance.now();
    const deadline = createDeadline(this.options.timeoutMs, call.signal, call.expiresAt);
    const progress: Progress = { status: undefined, retries: 0, credentialRetry: false };
    const { service } = this;
    const { route, method } = request;
    const end = (outcome: UpstreamCallEvent['outcome'], level: 'info' | 'warn' | 'debug', message: string, more = {}) => {
      const { status, retries, credentialRetry } = progress;
      const durationMs = Math.round(performance.now() - started);
      if (call.log.isLevelEnabled(level)) {
        // `upstream`, not `service`: the root logger's base already has `service: 'gateway'`.
        const path = this.#basePath + request.path;
        const fields = { upstream: service, method, route, path, status, durationMs, retries };
        // A success line's keys are fixed and none names a credential: redaction would find nothing on it.
        const log = outcome === 'success' ? call.log.child({}, { redact: [] }) : call.log;
        log[level]({ ...fields, ...(credentialRetry ? { credentialRetry } : {}), ...more }, message);
      }
      const event = { service, route, method, status, durationMs, retries, credentialRetry, outcome };
      emit(this.options.events?.onUpstreamCall, event);
      emit(traceEnd, event);
    };
    try {
      const answer = await this.#exchange(request, call, deadline, progress);
      end('success', 'info', 'upstream call');
      return answer;
    } catch (caught) {
      if (deadline.abortCause() === 'cancelled') {
        // The caller left: no upstream failure, and the request's own line says the rest.
        end('cancelled', 'debug', 'upstream call cancelled: the caller went away');
        throw new CallerGoneError({ upstream: service, route });
      }
      const error = errorForFailure(service, caught, deadline.abortCause(), route);
      forgetEchoedCredentials(error, [
        request.headers?.['authorization'],
        ...Object.values(progress.lease?.headers ?? {}),
        ...(request.secrets ?? []),
      ]);
      // A transport failure (errorForTransport) names the address it could not reach.
      const address = error.detail!['failure'] ? { address: this.#address } : {};
      // A missing update session is an ordinary answer, not a fault of the upstream.
      const level = error.code === 'NOT_FOUND' ? 'info' : 'warn';
      end(error.code, level, 'upstream call failed', { ...address, code: error.code, err: error });
      throw error;
    } finally {
      deadline.dispose();
    }
  }

  async #exchange<T>(request: UpstreamRequest<T>, call: CallOptions, deadline: Deadline, progress: Progress) {
    const source = request.credentials;
    progress.lease = await source?.acquire(deadline, call.log);
    let response = await this.#sendWithRetries(request, deadline, progress);
    if (response.statusCode === 401 && source && progress.lease) {
      await response.body.dump();
      progress.credentialRetry = true;
      progress.lease.invalidate();
      progress.lease = await source.acquire(deadline, call.log);
      response = await this.#sendWithRetries(request, deadline, progress);
    }
    return this.#readAnswer(request, response);
  }

  async #sendWithRetries<T>(request: UpstreamRequest<T>, deadline: Deadline, progress: Progress) {
    const policy = this.options.retry;
    const retryMethod = request.credentialRoute ? 'GET' : request.method;
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) query.set(name, String(value));
    }
    const path = this.#basePath + request.path + (query.size > 0 ? `?${query}` : '');
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < policy.maxRetries;
      let response: Dispatcher.ResponseData | undefined;
      let delay: number | undefined;
      try {
        // undici notices an abort only once a socket takes the request: a queued call would outlive its deadline.
        response = await untilAborted(
          this.options.dispatcher.request({
            origin: this.#origin,
            method: request.method,
            path,
            headers: { accept: 'application/json', ...request.headers, ...progress.lease?.headers },
            body: request.body,
            signal: deadline.signal,
          }),
          deadline.signal,
        );
      } catch (error) {
        // An aborted call ends here too: its error is no connection error, or the sleep rejects at once.
        delay = backoffMs(attempt, policy);
        if (!canRetry || !isRetryableConnectionError(errorCodeOf(error), retryMethod) || delay >= deadline.remainingMs()) {
          throw error;
        }
      }
      if (response) {
        progress.status = response.statusCode;
        if (retryMethod !== 'GET' || !canRetry || !retryableStatuses.has(response.statusCode)) return response;
        // Honour Retry-After; when it asks for more than the deadline leaves, fail now rather than sleep in vain.
        delay = retryAfterMs(response.headers['retry-after']) ?? backoffMs(attempt, policy);
        if (delay >= deadline.remainingMs()) return response;
        await response.body.dump();
      }
      await sleep(delay, undefined, { signal: deadline.signal });
      progress.retries++;
    }
  }

  async #readAnswer<T>(request: UpstreamRequest<T>, response: Dispatcher.ResponseData) {
    const { statusCode: status } = response;
    const { route } = request;
    const holding = this.options.answerBytes.holding();
    // The rest of the answer is left unread: the answer bytes in flight are at their bound.
    const refused = () => {
      emit(this.options.events?.onAnswerRefused, { service: this.service, route, reason: 'bytes_in_flight' });
      const { max, bytes } = this.options.answerBytes;
      const problem = 'upstream answer bytes in flight at their limit (UPSTREAM_MAX_BYTES_IN_FLIGHT)';
      const detail = { route, status, problem, answerBytesInFlight: bytes, maxAnswerBytesInFlight: max };
      return errorForAnswerBytes(this.service, detail);
    };
    const invalid = (problem: string, more = {}) => errorForInvalidBody(this.service, { route, status, problem, ...more });
    try {
      // undici answers with final statuses only: nothing below 200 ends a request.
      if (status >= 300) {
        // Only its error type is read of the body; refused for bytes, the call fails with that instead.
        const read = await readText(response.body, holding, refused).catch((error: unknown) => {
          if (error instanceof UpstreamError) throw error;
          return undefined;
        });
        throw errorForStatus(this.service, status, request, this.#basePath + request.path, read && errorTypeIn(read.text));
      }
      // A failure while reading is the connection's (or the deadline's); one while parsing is the body's.
      const { text, bodyBytes } = await readText(response.body, holding, refused);
      if (moreContainersThan(text, MAX_BODY_CONTAINERS)) {
        throw invalid(`body holds more than ${MAX_BODY_CONTAINERS} JSON arrays and objects`);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw invalid('body is not JSON');
      }
      const value = request.accepts?.(json) ? json : this.#parsed(request.schema, json, invalid);
      const problem = request.check?.(value);
      if (problem !== undefined) throw invalid(problem);
      return { value, bodyBytes };
    } finally {
      holding.release();
    }
  }

  #parsed<T>(schema: z.ZodType<T>, json: unknown, invalid: (problem: string, more?: object) => UpstreamError): T {
    let parsed: ReturnType<typeof schema.safeParse>;
    try {
      parsed = schema.safeParse(json);
    } catch {
      // Nested deeper than the validator's stack reaches.
      throw invalid('body is nested too deeply');
    }
    if (!parsed.success) throw invalid('body does not match its schema', { issues: summarizeIssues(parsed.error.issues) });
    return parsed.data;
  }
}

/** JSON arrays and objects a body may hold: an empty one takes far more heap than its bytes. */
export const MAX_BODY_CONTAINERS = 400_000;

/** `[` and `{` are counted by indexOf; only a body with more than `limit` is walked to leave out those in strings. */
function moreContainersThan(text: string, limit: number): boolean {
  let anywhere = 0;
  for (const opening of ['[', '{']) {
    for (let at = text.indexOf(opening); at !== -1 && anywhere <= limit; at = text.indexOf(opening, at + 1)) anywhere++;
  }
  if (anywhere <= limit) return false;
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
    } else if ((char === '[' || char === '{') && ++count > limit) {
      return true;
    }
  }
  return false;
}

/** Pieces are decoded in batches of this many bytes: a body sent a byte at a time is not one string per byte. */
export const DECODE_BATCH_BYTES = 64 * 1024;

/** The body as `body.text()` decodes it, each piece added to `holding`; ASCII, what these services send, needs no decoder. */
async function readText(body: Dispatcher.ResponseData['body'], holding: ByteHolding, refused: () => Error) {
  let decoder: TextDecoder | undefined;
  let text = '';
  let bodyBytes = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  const decode = () => {
    const bytes = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batchBytes);
    batch = [];
    batchBytes = 0;
    if (decoder === undefined && isAscii(bytes)) {
      text += bytes.toString('latin1');
    } else {
      // Made mid-body, it keeps a BOM there as text, as a whole read would.
      decoder ??= new TextDecoder('utf-8', { ignoreBOM: text !== '' });
      text += decoder.decode(bytes, { stream: true });
    }
  };
  for await (const chunk of body as AsyncIterable<Buffer>) {
    // Leaving the loop destroys the body: the rest of a refused answer is never received.
    if (!holding.add(chunk.length)) throw refused();
    bodyBytes += chunk.length;
    batch.push(chunk);
    batchBytes += chunk.length;
    if (batchBytes >= DECODE_BATCH_BYTES) decode();
  }
  decode();
  return { text: decoder ? text + decoder.decode() : text, bodyBytes };
}
