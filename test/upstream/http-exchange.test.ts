/**
 * One upstream exchange seen from outside, against undici's MockAgent (or a dispatcher that fails
 * on cue): what the log line names, what a tracer sees, how odd bodies end, and that a caller who
 * leaves during a backoff pause is let go at once, with no further attempt.
 */
import { getEventListeners } from 'node:events';
import type { Dispatcher } from 'undici';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ByteReservations } from '../../src/lib/byte-reservations.js';
import { createLogger } from '../../src/lib/logger.js';
import {
  DECODE_BATCH_BYTES,
  MAX_BODY_CONTAINERS,
  UpstreamHttp,
  type UpstreamHttpOptions,
  type UpstreamRequest,
} from '../../src/upstream/http.js';
import type { UpstreamCallEvent, UpstreamCallStart, UpstreamTracer } from '../../src/upstream/types.js';
import { MemoryLog } from '../helpers/memory-log.js';

const agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

function mockAgent(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  return agent;
}

function httpWith(baseUrl: string, dispatcher: Dispatcher, more: Partial<UpstreamHttpOptions> = {}) {
  const memory = new MemoryLog();
  const http = new UpstreamHttp({
    service: 'content-library',
    baseUrl,
    dispatcher,
    answerBytes: new ByteReservations(Number.POSITIVE_INFINITY),
    timeoutMs: 2000,
    retry: { maxRetries: 0, baseDelayMs: 10, maxDelayMs: 10 },
    ...more,
  });
  const log = createLogger({ level: 'debug', destination: memory });
  const failureLine = () => memory.lines().find((line) => line.msg === 'upstream call failed')!;
  const cancelledLine = () => memory.lines().find((line) => line.msg === 'upstream call cancelled: the caller went away')!;
  return { http, log, failureLine, cancelledLine };
}

const getItems = <T>(schema: z.ZodType<T>): UpstreamRequest<T> => ({ route: 'items', method: 'GET', path: '/items', schema });
const anything = z.unknown();
const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

describe('the address in the log line of a failed connection', { timeout: 10_000 }, () => {
  it.each([
    ['https://library.example', 'library.example:443'],
    ['http://library.example/base', 'library.example:80'],
    ['http://library.example:8081', 'library.example:8081'],
  ])('a refused connection to %s names %s', async (baseUrl, address) => {
    const agent = mockAgent();
    agent.get(new URL(baseUrl).origin).intercept({ path: /items/, method: 'GET' }).replyWithError(refused());
    const { http, log, failureLine } = httpWith(baseUrl, agent);
    await expect(http.request(getItems(anything), { log })).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(failureLine()).toMatchObject({ address, err: { detail: { failure: 'connection', errorCode: 'ECONNREFUSED' } } });
  });

  it('a call that runs out of time names the address too', async () => {
    const hanging = {
      request: ({ signal }: { signal: AbortSignal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
    } as unknown as Dispatcher;
    const { http, log, failureLine } = httpWith('https://library.example', hanging, { timeoutMs: 30 });
    const before = performance.now();
    await expect(http.request(getItems(anything), { log })).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    const elapsed = performance.now() - before;
    expect(failureLine()).toMatchObject({ address: 'library.example:443', err: { detail: { route: 'items', failure: 'timeout' } } });
    // The line's duration is the call's: from its start to the deadline, no more than the caller waited.
    expect(failureLine().durationMs).toBeGreaterThanOrEqual(25);
    expect(failureLine().durationMs).toBeLessThanOrEqual(Math.ceil(elapsed));
  });

  it('an answer with an error status names none: the address was reached', async () => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(500, { type: 'internal' });
    const { http, log, failureLine } = httpWith('https://library.example', agent);
    await expect(http.request(getItems(anything), { log })).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(failureLine()).toMatchObject({ status: 500, err: { detail: { upstreamError: 'internal' } } });
    expect(failureLine()).not.toHaveProperty('address');
  });
});

describe('the error type of a refused request', { timeout: 10_000 }, () => {
  it.each([
    ['x'.repeat(120), 'x'.repeat(120)],
    ['x'.repeat(121), undefined],
  ])('of up to 120 characters is logged, a longer one left out (%#)', async (type, logged) => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(400, { type });
    const { http, log, failureLine } = httpWith('https://library.example', agent);
    await expect(http.request(getItems(anything), { log })).rejects.toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE' });
    expect(failureLine().err.detail.upstreamError).toBe(logged);
  });

  it('of a status other than 404 never reads as an unknown path, whatever it says', async () => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(400, { type: 'com.vmware.vapi.std.errors.invalid_argument' });
    const { http, log } = httpWith('https://library.example', agent);
    const request = { ...getItems(anything), notFoundMessage: 'No such item.', notFoundType: /\.vapi\.std\.errors\.not_found$/ };
    const error = await http.request(request, { log }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', detail: { status: 400, upstreamError: 'com.vmware.vapi.std.errors.invalid_argument' } });
    expect((error as { detail: object }).detail).not.toHaveProperty('problem');
  });

  it('is left out when it is no string, so a list cannot pass for a vAPI not_found', async () => {
    const agent = mockAgent();
    const notFound = 'com.vmware.vapi.std.errors.not_found';
    agent.get('https://library.example').intercept({ path: '/api/items', method: 'GET' }).reply(404, { type: [notFound] });
    const { http, log, failureLine } = httpWith('https://library.example/api/', agent);
    const request = { ...getItems(anything), notFoundMessage: 'No such item.', notFoundType: /\.vapi\.std\.errors\.not_found$/ };
    const error = await http.request(request, { log }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_INVALID_RESPONSE', detail: { problem: 'no such path upstream: /api/items (check the base URL and vendor)' } });
    expect(failureLine().err.detail).not.toHaveProperty('upstreamError');
  });
});

describe('statuses worth another try', { timeout: 10_000 }, () => {
  const answering503 = (agent: MockAgent, method: 'GET' | 'POST') => {
    let attempts = 0;
    agent
      .get('https://library.example')
      .intercept({ path: '/items', method })
      .reply(() => {
        attempts++;
        return { statusCode: 503, data: { type: 'busy' } };
      })
      .persist();
    return () => attempts;
  };
  const policy = { retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 } };

  it('a GET is asked again as often as the policy allows, then fails with the last status', async () => {
    const agent = mockAgent();
    const attempts = answering503(agent, 'GET');
    const { http, log, failureLine } = httpWith('https://library.example', agent, policy);
    await expect(http.request(getItems(anything), { log })).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', detail: { status: 503 } });
    expect(attempts()).toBe(3);
    expect(failureLine()).toMatchObject({ status: 503, retries: 2 });
  });

  it('a POST that may not be repeated is asked once', async () => {
    const agent = mockAgent();
    const attempts = answering503(agent, 'POST');
    const { http, log, failureLine } = httpWith('https://library.example', agent, policy);
    const post: UpstreamRequest<unknown> = { route: 'items', method: 'POST', path: '/items', body: '{}', schema: anything };
    await expect(http.request(post, { log })).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', detail: { status: 503 } });
    expect(attempts()).toBe(1);
    expect(failureLine()).toMatchObject({ status: 503, retries: 0 });
  });
});

describe('a status outside 2xx', { timeout: 10_000 }, () => {
  it('is no answer even when its body fits, from 300 on', async () => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(300, ['a']);
    const { http, log } = httpWith('https://library.example', agent);
    await expect(http.request(getItems(z.array(z.string())), { log })).rejects.toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
      message: 'The content library service answered with an unexpected status.',
      detail: { status: 300 },
    });
  });
});

describe('answers that do not fit their schema', { timeout: 10_000 }, () => {
  it('names a schema mismatch as such in the error detail', async () => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(200, { items: 'none' });
    const { http, log } = httpWith('https://library.example', agent);
    const error = await http.request(getItems(z.object({ items: z.array(z.string()) })), { log }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
      detail: { problem: 'body does not match its schema', issues: [expect.objectContaining({ path: 'items' })] },
    });
  });

  it('turns a body nested past what the validator can walk into UPSTREAM_INVALID_RESPONSE', async () => {
    type Tree = Tree[];
    const tree: z.ZodType<Tree> = z.lazy(() => z.array(tree));
    const depth = 200_000;
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(200, '['.repeat(depth) + ']'.repeat(depth));
    const { http, log } = httpWith('https://library.example', agent);
    await expect(http.request(getItems(tree), { log })).rejects.toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
      detail: { problem: 'body is nested too deeply' },
    });
  });
});

// No timeout of its own: the mutation run (vitest.stryker.config.ts) raises the suite's, as its instrumentation slows these scans.
describe('a body of many arrays and objects', () => {
  const answering = (body: string) => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(200, body);
    const { http, log } = httpWith('https://library.example', agent);
    return http.request(getItems(z.unknown()), { log }).then((answer) => answer.value);
  };
  const emptyArrays = (count: number) => `[${new Array(count).fill('[]').join(',')}]`;

  it(`is refused past ${MAX_BODY_CONTAINERS} of them, before it is parsed`, async () => {
    await expect(answering(emptyArrays(MAX_BODY_CONTAINERS))).rejects.toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
      detail: { problem: `body holds more than ${MAX_BODY_CONTAINERS} JSON arrays and objects` },
    });
    const emptyObjects = `[${new Array(MAX_BODY_CONTAINERS / 2).fill('{}').join(',')}]`;
    await expect(answering(`{"a":${emptyArrays(MAX_BODY_CONTAINERS / 2)},"b":${emptyObjects}}`)).rejects.toMatchObject({
      code: 'UPSTREAM_INVALID_RESPONSE',
    });
  });

  it('is read up to that many', async () => {
    await expect(answering(emptyArrays(MAX_BODY_CONTAINERS - 1))).resolves.toHaveLength(MAX_BODY_CONTAINERS - 1);
  });

  it('is read with exactly that many outside its strings while its strings hold more', async () => {
    const body = `[${['"["', ...new Array(MAX_BODY_CONTAINERS - 1).fill('[]')].join(',')}]`;
    await expect(answering(body)).resolves.toHaveLength(MAX_BODY_CONTAINERS);
  });

  it('counts only arrays and objects, not the numbers and commas between them', async () => {
    const body = { text: '['.repeat(MAX_BODY_CONTAINERS), numbers: new Array(MAX_BODY_CONTAINERS).fill(0) };
    await expect(answering(JSON.stringify(body))).resolves.toEqual(body);
  });

  it('is read whatever brackets its strings hold, escaped quotes and backslashes included', async () => {
    const brackets = '[{'.repeat(MAX_BODY_CONTAINERS);
    const text = `\\" ${brackets} \\`;
    await expect(answering(JSON.stringify({ records: [text, `"${brackets}`] }))).resolves.toEqual({ records: [text, `"${brackets}`] });
  });
});

describe('a tracer', { timeout: 10_000 }, () => {
  it('sees where each call starts and how it ended, and passes the answer on', async () => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/items', method: 'GET' }).reply(200, ['a']);
    const starts: UpstreamCallStart[] = [];
    const ends: UpstreamCallEvent[] = [];
    const tracer: UpstreamTracer = {
      traceCall: (start, call) => {
        starts.push(start);
        return call((event) => ends.push(event));
      },
    };
    const { http, log } = httpWith('https://library.example', agent, { tracer });
    await expect(http.request(getItems(z.array(z.string())), { log })).resolves.toMatchObject({ value: ['a'] });
    expect(starts).toEqual([{ service: 'content-library', route: 'items', method: 'GET' }]);
    expect(ends).toMatchObject([{ route: 'items', status: 200, outcome: 'success' }]);
  });
});

describe('a caller who leaves during a backoff pause', { timeout: 10_000 }, () => {
  const retrying = { retry: { maxRetries: 3, baseDelayMs: 400, maxDelayMs: 400 } };

  /**
   * One attempt answered by `attempt`, which is handed `leave`: the caller goes away once that
   * attempt's outcome has been handled, i.e. during the pause before the next. Returns the call's line.
   */
  async function leaveDuringBackoff(attempt: (leave: () => void) => Promise<unknown>) {
    const caller = new AbortController();
    let attempts = 0;
    const dispatcher = {
      request: async () => {
        attempts++;
        return attempt(() => setImmediate(() => caller.abort()));
      },
    } as unknown as Dispatcher;
    const { http, log, failureLine, cancelledLine } = httpWith('https://library.example', dispatcher, retrying);
    await expect(http.request(getItems(anything), { log, signal: caller.signal })).rejects.toMatchObject({
      name: 'CallerGoneError',
      detail: { upstream: 'content-library', route: 'items' },
    });
    expect(attempts).toBe(1);
    expect(failureLine()).toBeUndefined();
    expect(cancelledLine()).toMatchObject({ level: 20 });
    return cancelledLine();
  }

  it('after a failed connection, is let go without another attempt', async () => {
    const line = await leaveDuringBackoff(async (leave) => {
      leave();
      throw refused();
    });
    expect(line).toMatchObject({ retries: 0 });
  });

  it('after a 503 with Retry-After, is let go without another attempt', async () => {
    const line = await leaveDuringBackoff(async (leave) => ({
      statusCode: 503,
      headers: { 'retry-after': '1' },
      body: { dump: async () => leave(), json: async () => ({}), text: async () => '{}' },
    }));
    expect(line).toMatchObject({ status: 503, retries: 0 });
  });
});

describe('a call seen from its caller', { timeout: 10_000 }, () => {
  it('reaches the path below the base URL, however many slashes end the base URL', async () => {
    const agent = mockAgent();
    agent.get('https://library.example').intercept({ path: '/vapi/items', method: 'GET' }).reply(200, { ok: true });
    const { http, log } = httpWith('https://library.example/vapi//', agent);
    await expect(http.request(getItems(anything), { log })).resolves.toMatchObject({ value: { ok: true } });
  });

  it("leaves no listener on the caller's signal once its calls are over, answered or failed", async () => {
    const agent = mockAgent();
    const library = agent.get('https://library.example');
    library.intercept({ path: '/items', method: 'GET' }).reply(200, { ok: true }).times(11);
    library.intercept({ path: '/items', method: 'GET' }).reply(500, { type: 'internal' });
    const { http, log } = httpWith('https://library.example', agent);
    // One request's signal, shared by its upstream calls: more than ten listeners left on it would
    // also be reported by Node as a possible leak.
    const request = new AbortController();
    for (let call = 0; call < 11; call++) await http.request(getItems(anything), { log, signal: request.signal });
    await expect(http.request(getItems(anything), { log, signal: request.signal })).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(getEventListeners(request.signal, 'abort')).toEqual([]);
  });
});

/** Two bytes a piece: every multi-byte character is cut somewhere. */
function twoBytePieces(body: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let i = 0; i < body.length; i += 2) pieces.push(body.subarray(i, i + 2));
  return pieces;
}

/** A body that arrives in exactly the pieces given, as the gateway reads it. */
function readInPieces(pieces: readonly Buffer[]) {
  async function* arriving(): AsyncGenerator<Buffer> {
    for (const piece of pieces) yield piece;
  }
  const dispatcher = { request: async () => ({ statusCode: 200, headers: {}, body: arriving() }) } as unknown as Dispatcher;
  const { http, log } = httpWith('https://library.example', dispatcher);
  return http.request(getItems(anything), { log });
}

describe('a body that arrives in pieces', { timeout: 10_000 }, () => {
  it('is read whole: characters split between pieces, a leading BOM and a malformed byte as a full read decodes them', async () => {
    const json = Buffer.from(JSON.stringify({ name: 'Zoë Łukasz 日本 🎉', note: 'x' }));
    // A byte that is no UTF-8 where "x" was: decoded as U+FFFD, as any UTF-8 reader does.
    json[json.lastIndexOf('x')] = 0xff;
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]);
    const answer = await readInPieces(twoBytePieces(body));
    expect(answer.value).toEqual({ name: 'Zoë Łukasz 日本 🎉', note: '\ufffd' });
    // The size of the body as it came, for caches bounded in bytes.
    expect(answer.bodyBytes).toBe(body.length);
  });

  /** `{"note":"` and ASCII up to one decoding batch exactly, then `last` (a byte or two), as one piece. */
  const firstBatch = (last: number[]) => {
    const open = Buffer.from(`{"note":"`);
    const filler = Buffer.alloc(DECODE_BATCH_BYTES - open.length - last.length, 'y');
    return { piece: Buffer.concat([open, filler, Buffer.from(last)]), note: filler.toString() };
  };

  it('is read whole when its first batch is ASCII: a BOM after it is text, as a whole read keeps it', async () => {
    const { piece, note } = firstBatch([]);
    const answer = await readInPieces([piece, Buffer.from('\ufeffZoë 日本 🎉"}')]);
    expect(answer.value).toEqual({ note: `${note}\ufeffZoë 日本 🎉` });
  });

  it('joins a character cut between two batches', async () => {
    // "é" is C3 A9.
    const { piece, note } = firstBatch([0xc3]);
    const answer = await readInPieces([piece, Buffer.from([0xa9]), Buffer.from(' au lait"}')]);
    expect(answer.value).toEqual({ note: `${note}é au lait` });
  });

  it('is read in order when a batch ends in a character cut short and the next is ASCII', async () => {
    // A first byte of "é" alone, then plain text, reads as U+FFFD before that text.
    const { piece, note } = firstBatch([0xc3]);
    const answer = await readInPieces([piece, Buffer.from(' au lait"}')]);
    expect(answer.value).toEqual({ note: `${note}\ufffd au lait` });
  });
});
