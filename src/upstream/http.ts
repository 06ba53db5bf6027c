/**
 * The REST data source under both clients: one call = credentials + exchange + retries + mapping +
 * zod validation + one log line, all within one deadline. Knows nothing of GraphQL.
 *
 * An answer's body bytes count against a bound shared by every call of the process (`answerBytes`)
 * from their arrival until the answer has been parsed and checked, or the call failed: the body cap
 * bounds one answer, not the 32 connections per service that may each be receiving one.
 */
import { isAscii } from 'node:buffer';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { ByteHolding, ByteReservations } from '../lib/byte-reservations.js';
import { CallerGoneError, UpstreamError, type UpstreamService } from '../lib/errors.js';
import type { CredentialLease, CredentialSource } from './credentials.js';
import { createDeadline, untilAborted, type Deadline } from './deadline.js';
import {
  errorForAnswerBytes,
  errorForInvalidBody,
  errorForStatus,
  errorForTransport,
  summarizeIssues,
} from './error-mapping.js';
import { errorTypeIn, forgetEchoedCredentials } from './error-type.js';
import { emit, type UpstreamCallEvent, type UpstreamEvents, type UpstreamTracer } from './events.js';
import {
  backoffMs,
  errorCodeOf,
  isRetryableConnectionError,
  retryableStatuses,
  retryAfterMs,
  type RetryPolicy,
} from './retry.js';

export interface UpstreamRequest<T> {
  /** Stable label for logs and metrics. */
  readonly route: string;
  readonly method: 'GET' | 'POST';
  /** Path below the configured base URL, without a query string. */
  readonly path: string;
  /** Sent, never logged. */
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Credentials in the body (a refresh token): kept out of the log like those in headers. Undefined ones are skipped. */
  readonly secrets?: readonly (string | undefined)[];
  /** The answer's documented shape; a mismatch is UPSTREAM_INVALID_RESPONSE. */
  readonly schema: z.ZodType<T>;
  /**
   * A cheaper check of the same shape for a hot route: when it accepts, the parsed body is the
   * answer as it is (no zod copy); when not, `schema` decides. It must accept only what `schema`
   * accepts unchanged.
   */
  readonly accepts?: (json: unknown) => json is T;
  /**
   * What the shape cannot say, checked once it is known (an audit page with more rows than asked):
   * a problem it names, for the log, makes the answer UPSTREAM_INVALID_RESPONSE.
   */
  readonly check?: (answer: T) => string | undefined;
  readonly credentials?: CredentialSource;
  readonly credentialRoute?: boolean;
  /**
   * A POST that may be repeated (a token grant, a session login): retried like a GET on connection
   * errors and 429/502/503/504. Other POSTs are repeated only when they provably never left.
   */
  readonly retryLikeGet?: boolean;
  readonly notFoundMessage?: string;
  /**
   * The upstream error type (`type` of a vAPI body) that makes a 404 mean "not found". A 404
   * without it is an unknown path (a misconfigured base URL or vendor): UPSTREAM_INVALID_RESPONSE.
   */
  readonly notFoundType?: RegExp;
}

export interface UpstreamHttpOptions {
  readonly service: UpstreamService;
  /** The configured base URL; its path (if any) prefixes every request path. */
  readonly baseUrl: string;
  /** The service's own keep-alive pool for the base URL's origin. */
  readonly dispatcher: Dispatcher;
  /** Answer bytes being received and parsed, shared by every call of the process (both services). */
  readonly answerBytes: ByteReservations;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly events?: UpstreamEvents;
  readonly tracer?: UpstreamTracer | undefined;
}

export interface RequestCall {
  readonly log: Logger;
  /** The operation's signal: aborts when its deadline passes or its caller leaves. */
  readonly signal?: AbortSignal | undefined;
  /** When the operation's deadline passes (performance.now()'s clock); the call ends by then. */
  readonly expiresAt?: number | undefined;
}

/** An answer with the byte length of the body it was read from (for caches bounded in bytes). */
export interface MeasuredAnswer<T> {
  readonly value: T;
  readonly bodyBytes: number;
}

interface Progress {
  status: number | undefined;
  retries: number;
  credentialRetry: boolean;
  /** The credential of the last attempt: an error type that repeats it is not logged. */
  lease: CredentialLease | undefined;
}

export class UpstreamHttp {
  readonly service: UpstreamService;
  readonly #origin: string;
  /** host:port, for the log line of a connection that failed. */
  readonly #address: string;
  readonly #basePath: string;
  readonly #options: UpstreamHttpOptions;

  constructor(options: UpstreamHttpOptions) {
    const url = new URL(options.baseUrl);
    this.service = options.service;
    this.#origin = url.origin;
    this.#address = `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
    this.#basePath = url.pathname.replace(/\/+$/, '');
    this.#options = options;
  }

  /** Resolves with the validated answer or rejects with an UpstreamError, after logging one line. */
  async request<T>(request: UpstreamRequest<T>, call: RequestCall): Promise<T> {
    return (await this.measuredRequest(request, call)).value;
  }

  /** As request(), plus the byte length of the answer's body. */
  measuredRequest<T>(request: UpstreamRequest<T>, call: RequestCall): Promise<MeasuredAnswer<T>> {
    const tracer = this.#options.tracer;
    if (!tracer) return this.#measuredRequest(request, call, undefined);
    const start = { service: this.service, route: request.route, method: request.method };
    return tracer.traceCall(start, (end) => this.#measuredRequest(request, call, end));
  }

  async #measuredRequest<T>(
    request: UpstreamRequest<T>,
    call: RequestCall,
    traceEnd: ((event: UpstreamCallEvent) => void) | undefined,
  ): Promise<MeasuredAnswer<T>> {
    const started = performance.now();
    const deadline = createDeadline(this.#options.timeoutMs, call.signal, call.expiresAt);
    const progress: Progress = { status: undefined, retries: 0, credentialRetry: false, lease: undefined };
    // `upstream`, not `service`: the root logger's base already has `service: 'gateway'`.
    const line = () => ({
      upstream: this.service,
      method: request.method,
      route: request.route,
      path: this.#basePath + request.path,
      status: progress.status,
      durationMs: Math.round(performance.now() - started),
      retries: progress.retries,
      ...(progress.credentialRetry ? { credentialRetry: true } : {}),
    });
    const event = (fields: ReturnType<typeof line>, outcome: UpstreamCallEvent['outcome']): UpstreamCallEvent => ({
      service: this.service,
      route: fields.route,
      method: fields.method,
      status: fields.status,
      durationMs: fields.durationMs,
      retries: fields.retries,
      credentialRetry: progress.credentialRetry,
      outcome,
    });
    const report = (ended: UpstreamCallEvent) => {
      emit(this.#options.events?.onUpstreamCall, ended);
      emit(traceEnd, ended);
    };
    try {
      const answer = await this.#exchange(request, call.log, deadline, progress);
      const fields = line();
      call.log.info(fields, 'upstream call');
      report(event(fields, 'success'));
      return answer;
    } catch (caught) {
      if (deadline.abortCause() === 'cancelled') {
        // The caller left: no upstream failure. One debug line; the request's own line says the rest.
        const fields = line();
        call.log.debug(fields, 'upstream call cancelled: the caller went away');
        report(event(fields, 'cancelled'));
        throw new CallerGoneError({ upstream: this.service, route: request.route });
      }
      const error = this.#asUpstreamError(caught, deadline, request.route);
      const sent = [
        request.headers?.['authorization'],
        ...Object.values(progress.lease?.headers ?? {}),
        // Stryker disable next-line ArrayDeclaration: with no secrets given, a text in their place only hides an error type that echoes it, which no answer does
        ...(request.secrets ?? []),
      ];
      forgetEchoedCredentials(error, sent);
      const fields = line();
      // A missing update session is an ordinary answer, not a fault of the upstream.
      const level = error.code === 'NOT_FOUND' ? 'info' : 'warn';
      // Stryker disable next-line OptionalChaining: an UpstreamError always carries a detail, its service at least
      const failure = error.detail?.['failure'];
      const address = failure === 'connection' || failure === 'timeout' || failure === 'deadline' ? { address: this.#address } : {};
      call.log[level]({ ...fields, ...address, code: error.code, err: error }, 'upstream call failed');
      report(event(fields, error.code));
      throw error;
    } finally {
      deadline.dispose();
    }
  }

  /** Credentials, send (with transient retries), one renewal on 401, then read the answer. */
  async #exchange<T>(
    request: UpstreamRequest<T>,
    log: Logger,
    deadline: Deadline,
    progress: Progress,
  ): Promise<MeasuredAnswer<T>> {
    const source = request.credentials;
    let lease: CredentialLease | undefined = source ? await source.acquire(deadline, log) : undefined;
    for (;;) {
      const response = await this.#sendWithRetries(request, lease, deadline, progress);
      if (response.statusCode === 401 && source && lease && !progress.credentialRetry) {
        await response.body.dump();
        progress.credentialRetry = true;
        lease.invalidate();
        lease = await source.acquire(deadline, log);
        continue;
      }
      return await this.#readAnswer(request, response);
    }
  }

  async #sendWithRetries<T>(
    request: UpstreamRequest<T>,
    lease: CredentialLease | undefined,
    deadline: Deadline,
    progress: Progress,
  ): Promise<Dispatcher.ResponseData> {
    const policy = this.#options.retry;
    const retryMethod = request.retryLikeGet ? 'GET' : request.method;
    progress.lease = lease;
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < policy.maxRetries;
      let response: Dispatcher.ResponseData;
      try {
        // undici notices an abort only once a socket takes the request: a call waiting for a
        // pooled connection would outlive its deadline by as long as the connection stays busy.
        response = await untilAborted(
          this.#options.dispatcher.request({
            origin: this.#origin,
            method: request.method,
            path: this.#pathWithQuery(request),
            headers: { accept: 'application/json', ...request.headers, ...lease?.headers },
            body: request.body,
            signal: deadline.signal,
          }),
          deadline.signal,
        );
      } catch (error) {
        // An aborted call ends below as well: its error is no connection error, or the sleep rejects at once.
        const code = errorCodeOf(error);
        const delay = backoffMs(attempt, policy);
        // Stryker disable next-line EqualityOperator: the time left is fractional and falling; no test can make a delay equal it
        if (!canRetry || !isRetryableConnectionError(code, retryMethod) || delay >= deadline.remainingMs()) {
          throw error;
        }
        await sleep(delay, undefined, { signal: deadline.signal });
        progress.retries++;
        continue;
      }
      progress.status = response.statusCode;
      if (retryMethod !== 'GET' || !canRetry || !retryableStatuses.has(response.statusCode)) return response;
      // Honour Retry-After; when it asks for more than the deadline leaves, fail now rather than sleep in vain.
      const delay = retryAfterMs(response.headers['retry-after']) ?? backoffMs(attempt, policy);
      // Stryker disable next-line EqualityOperator: the time left is fractional and falling; no test can make a delay equal it
      if (delay >= deadline.remainingMs()) return response;
      await response.body.dump();
      await sleep(delay, undefined, { signal: deadline.signal });
      progress.retries++;
    }
  }

  async #readAnswer<T>(request: UpstreamRequest<T>, response: Dispatcher.ResponseData): Promise<MeasuredAnswer<T>> {
    const holding = this.#options.answerBytes.holding();
    try {
      return await this.#readHeldAnswer(request, response, holding);
    } finally {
      holding.release();
    }
  }

  async #readHeldAnswer<T>(
    request: UpstreamRequest<T>,
    response: Dispatcher.ResponseData,
    holding: ByteHolding,
  ): Promise<MeasuredAnswer<T>> {
    const { statusCode } = response;
    const refused = () => this.#refusedForBytes(request.route, statusCode);
    // undici answers with final statuses only: an informational one (below 200) never ends a request.
    if (statusCode >= 300) {
      const upstreamError = await readErrorType(response.body, holding, refused);
      const unknownPath =
        // Stryker disable next-line StringLiteral: an absent error type reads as a text no not-found type matches; which text is moot
        statusCode === 404 && request.notFoundType !== undefined && !request.notFoundType.test(upstreamError ?? '');
      throw errorForStatus(this.service, statusCode, {
        credentialRoute: request.credentialRoute,
        notFoundMessage: unknownPath ? undefined : request.notFoundMessage,
        detail: {
          route: request.route,
          ...(upstreamError ? { upstreamError } : {}),
          ...(unknownPath ? { problem: `no such path upstream: ${this.#basePath + request.path} (check the base URL and vendor)` } : {}),
        },
      });
    }
    // A failure while reading is the connection's (or the deadline's); one while parsing is the body's.
    const { text, bodyBytes } = await readText(response.body, holding, refused);
    if (moreContainersThan(text, MAX_BODY_CONTAINERS)) {
      throw errorForInvalidBody(this.service, {
        route: request.route,
        status: statusCode,
        problem: `body holds more than ${MAX_BODY_CONTAINERS} JSON arrays and objects`,
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw errorForInvalidBody(this.service, { route: request.route, status: statusCode, problem: 'body is not JSON' });
    }
    const value = this.#validated(request, json, statusCode);
    const problem = request.check?.(value);
    if (problem !== undefined) {
      throw errorForInvalidBody(this.service, { route: request.route, status: statusCode, problem });
    }
    return { value, bodyBytes };
  }

  #validated<T>(request: UpstreamRequest<T>, json: unknown, status: number): T {
    // Stryker disable next-line ConditionalExpression: the fast check accepts only what the schema returns unchanged; the answer is the same
    if (request.accepts?.(json)) return json;
    let parsed: ReturnType<typeof request.schema.safeParse>;
    try {
      parsed = request.schema.safeParse(json);
    } catch {
      // A body nested deeper than the validator's stack reaches.
      throw errorForInvalidBody(this.service, { route: request.route, status, problem: 'body is nested too deeply' });
    }
    if (!parsed.success) {
      throw errorForInvalidBody(this.service, {
        route: request.route,
        status,
        problem: 'body does not match its schema',
        issues: summarizeIssues(parsed.error.issues),
      });
    }
    return parsed.data;
  }

  /** The rest of the call's answer is left unread: the answer bytes in flight are at their bound. */
  #refusedForBytes(route: string, status: number): UpstreamError {
    emit(this.#options.events?.onAnswerRefused, { service: this.service, route, reason: 'bytes_in_flight' });
    const { max, bytes } = this.#options.answerBytes;
    return errorForAnswerBytes(this.service, {
      route,
      status,
      problem: 'upstream answer bytes in flight at their limit (UPSTREAM_MAX_BYTES_IN_FLIGHT)',
      answerBytesInFlight: bytes,
      maxAnswerBytesInFlight: max,
    });
  }

  #pathWithQuery<T>(request: UpstreamRequest<T>): string {
    const path = this.#basePath + request.path;
    if (!request.query) return path;
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query)) {
      if (value !== undefined) query.set(name, String(value));
    }
    const text = query.toString();
    return text ? `${path}?${text}` : path;
  }

  #asUpstreamError(caught: unknown, deadline: Deadline, route: string): UpstreamError {
    if (caught instanceof UpstreamError) return caught;
    const cause = deadline.abortCause();
    if (cause === 'timeout' || cause === 'deadline') return errorForTransport(this.service, cause, { route });
    const errorCode = errorCodeOf(caught);
    if (errorCode === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      return errorForInvalidBody(this.service, { route, problem: 'body exceeds the size limit' });
    }
    return errorForTransport(this.service, 'connection', {
      route,
      errorCode,
      errorName: caught instanceof Error ? caught.name : typeof caught,
    });
  }
}

/**
 * JSON arrays and objects a body may hold. An empty one parses into some 50 bytes of heap for its 3
 * bytes of JSON: a 16 MB body of them would take 250 MB. A 5000-row audit page holds about 15,000
 * (its records are strings, parsed one by one later, under bounds of their own).
 */
export const MAX_BODY_CONTAINERS = 400_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const BRACKET_L = 0x5b;
const BRACE_L = 0x7b;

/**
 * First `[` and `{` anywhere, counted natively by indexOf (about 0.5 ms for a 5000-row page); only a
 * body with more of them than the limit is walked character by character to leave out those in strings.
 */
function moreContainersThan(text: string, limit: number): boolean {
  let anywhere = 0;
  for (const opening of ['[', '{']) {
    // Stryker disable next-line ConditionalExpression: counting on past the limit only takes longer; the answer is the same
    for (let at = text.indexOf(opening); at !== -1 && anywhere <= limit; at = text.indexOf(opening, at + 1)) anywhere++;
  }
  // Stryker disable next-line ConditionalExpression,EqualityOperator: the shortcut saves work only; the walk below never counts more than indexOf found
  if (anywhere <= limit) return false;
  let count = 0;
  let inString = false;
  // Stryker disable next-line EqualityOperator: one step past the end reads NaN, which is no character
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if ((code === BRACKET_L || code === BRACE_L) && ++count > limit) {
      return true;
    }
  }
  return false;
}

/**
 * Pieces of a body are gathered to at least this many bytes before they are decoded: however small
 * the pieces it arrives in, its text is a few large strings joined, not one per piece (each join
 * costs 32 bytes of heap: a megabyte sent a byte at a time would cost 32 MB).
 */
export const DECODE_BATCH_BYTES = 64 * 1024;

/**
 * The body as text, decoded batch by batch as it arrives: each batch can be freed once decoded,
 * where reading it whole would hold every piece, their concatenation and the text at once (a
 * 5000-row audit page is 3.4 MB). Each piece is added to `holding` as it arrives; one that does not
 * fit ends the read with `refused()`. Decoded as `body.text()` does: UTF-8, a leading BOM dropped,
 * malformed bytes replaced. ASCII, what these services send, is taken as it is: a UTF-8 decoder
 * costs more to make than a small page takes to copy, and decodes ASCII slower.
 */
async function readText(
  body: Dispatcher.ResponseData['body'],
  holding: ByteHolding,
  refused: () => Error,
): Promise<{ text: string; bodyBytes: number }> {
  let decoder: TextDecoder | undefined;
  let text = '';
  let bodyBytes = 0;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  const decode = () => {
    // Stryker disable next-line ConditionalExpression: a batch of one piece concatenated is the same bytes, copied
    const bytes = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batchBytes);
    batch = [];
    batchBytes = 0;
    // Stryker disable next-line ConditionalExpression: a decoder for every batch reads the same text, only slower
    if (decoder === undefined && isAscii(bytes)) {
      // ASCII is its own Latin-1: the bytes are the characters.
      text += bytes.toString('latin1');
    } else {
      // From the first byte that is not ASCII on. Made mid-body, it keeps a BOM there as text, as a whole read would.
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
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the same text either way; the memory it takes is held by test/soak/trickled-body.test.ts, in a process of its own
    if (batchBytes >= DECODE_BATCH_BYTES) decode();
  }
  decode();
  return { text: decoder ? text + decoder.decode() : text, bodyBytes };
}

/**
 * The error type of a refusal's body (see error-type.ts), its bytes held as an answer's are. A body
 * that cannot be read has no type; one refused for the bytes in flight fails the call as such.
 */
async function readErrorType(
  body: Dispatcher.ResponseData['body'],
  holding: ByteHolding,
  refused: () => UpstreamError,
): Promise<string | undefined> {
  let text: string;
  try {
    ({ text } = await readText(body, holding, refused));
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    return undefined;
  }
  return errorTypeIn(text);
}
