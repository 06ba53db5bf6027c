/**
 * HTTP control surface under `/__simulator/`, so a simulator in another process can be steered.
 * Bodies are JSON; every POST answers `{"ok":true}` unless noted; bad input answers 400 `{"error"}`.
 *
 *   GET  /__simulator/counters                      -> SimulatorCounters
 *   POST /__simulator/reset-counters
 *   POST /__simulator/fail-next      {count, status, route?, retryAfterSeconds?}
 *   POST /__simulator/latency        {ms, route?}
 *   POST /__simulator/malform-next   {route, count?, kind?: "shape"|"truncated"}
 *   POST /__simulator/expire-tokens  {refreshTokensToo?}
 *   POST /__simulator/expire-sessions
 *   POST /__simulator/token-lifetime {seconds}
 *   POST /__simulator/refuse-refresh {count?}
 *   POST /__simulator/hostile-next   {route, kind, count?, bytes?}     (kinds: see HostileKind)
 *   POST /__simulator/inconsistent-pages {count?}
 *   POST /__simulator/insert-events  {count, objectType?, timestamp?}   -> {events: AuditRecordData[]}
 *   POST /__simulator/corrupt-event  {uuid}                             (404 for an unknown uuid)
 *   GET  /__simulator/events?fromMillis=&toMillis=&objectType=&action= -> {events: AuditRecordData[]}
 *   GET  /__simulator/sessions                                          -> {sessions: [{id, covers}]}
 *   POST /__simulator/clear-faults
 *   POST /__simulator/reset          clear-faults and reset-counters together
 */
import { z } from 'zod';
import { jsonAnswer, parseInteger, type Answer, type RequestContext } from './http-util.js';
import { SIMULATOR_ROUTES, type SimulatorControl, type SimulatorRoute } from './types.js';

export const CONTROL_PREFIX = '/__simulator/';

const count = z.number().int().nonnegative();
const route = z.enum(SIMULATOR_ROUTES as [SimulatorRoute, ...SimulatorRoute[]]);
const schemas = {
  failNext: z.object({ count, status: z.number().int(), route: route.optional(), retryAfterSeconds: count.optional() }),
  latency: z.object({ ms: z.number().nonnegative(), route: route.optional() }),
  malformNext: z.object({ route, count: count.optional(), kind: z.enum(['shape', 'truncated']).optional() }),
  expireTokens: z.object({ refreshTokensToo: z.boolean().optional() }),
  tokenLifetime: z.object({ seconds: count }),
  refuseRefresh: z.object({ count: count.optional() }),
  hostileNext: z.object({
    route,
    kind: z.enum(['huge-record', 'deep-record', 'oversize-body', 'endless-body', 'reset-mid-body', 'drop-connection']),
    count: count.optional(),
    bytes: count.optional(),
  }),
  inconsistentPages: z.object({ count: count.optional() }),
  insertEvents: z.object({ count, objectType: z.string().min(1).optional(), timestamp: z.number().int().optional() }),
  corruptEvent: z.object({ uuid: z.string().min(1) }),
};

class BadControlInput extends Error {}

function parseBody<T>(schema: z.ZodType<T>, body: string): T {
  let json: unknown;
  try {
    json = body.trim() === '' ? {} : JSON.parse(body);
  } catch {
    throw new BadControlInput('body must be JSON');
  }
  const result = schema.safeParse(json);
  if (!result.success) throw new BadControlInput(result.error.issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; '));
  return result.data;
}

function eventFilter(params: URLSearchParams) {
  const int = (name: string) => {
    const text = params.get(name);
    if (text === null || text === '') return undefined;
    const value = parseInteger(text);
    if (value === undefined) throw new BadControlInput(`${name} must be an integer`);
    return value;
  };
  return {
    fromMillis: int('fromMillis'),
    toMillis: int('toMillis'),
    objectType: params.get('objectType') || undefined,
    action: params.get('action') || undefined,
  };
}

const OK = () => jsonAnswer(200, { ok: true });

export function handleControl(ctx: RequestContext, control: SimulatorControl): Answer {
  const action = ctx.url.pathname.slice(CONTROL_PREFIX.length).replace(/\/$/, '');
  const key = `${ctx.method} ${action}`;
  try {
    switch (key) {
      case 'GET counters':
        return jsonAnswer(200, control.counters());
      case 'GET sessions':
        return jsonAnswer(200, { sessions: control.sessions() });
      case 'GET events':
        return jsonAnswer(200, { events: control.events(eventFilter(ctx.url.searchParams)) });
      case 'POST reset-counters':
        control.resetCounters();
        return OK();
      case 'POST fail-next': {
        const b = parseBody(schemas.failNext, ctx.body);
        control.failNext(b.count, b.status, { route: b.route, retryAfterSeconds: b.retryAfterSeconds });
        return OK();
      }
      case 'POST latency': {
        const b = parseBody(schemas.latency, ctx.body);
        control.setLatency(b.ms, b.route);
        return OK();
      }
      case 'POST malform-next': {
        const b = parseBody(schemas.malformNext, ctx.body);
        control.malformNext(b.route, b.count, { kind: b.kind });
        return OK();
      }
      case 'POST expire-tokens':
        control.expireTokens({ refreshTokensToo: parseBody(schemas.expireTokens, ctx.body).refreshTokensToo });
        return OK();
      case 'POST expire-sessions':
        control.expireSessions();
        return OK();
      case 'POST token-lifetime':
        control.setTokenLifetime(parseBody(schemas.tokenLifetime, ctx.body).seconds);
        return OK();
      case 'POST refuse-refresh':
        control.refuseRefresh(parseBody(schemas.refuseRefresh, ctx.body).count);
        return OK();
      case 'POST hostile-next': {
        const b = parseBody(schemas.hostileNext, ctx.body);
        control.hostileNext(b.route, b.kind, { count: b.count, bytes: b.bytes });
        return OK();
      }
      case 'POST inconsistent-pages':
        control.inconsistentPages(parseBody(schemas.inconsistentPages, ctx.body).count);
        return OK();
      case 'POST insert-events': {
        const b = parseBody(schemas.insertEvents, ctx.body);
        return jsonAnswer(200, { events: control.insertEvents(b.count, { objectType: b.objectType, timestamp: b.timestamp }) });
      }
      case 'POST corrupt-event': {
        const { uuid } = parseBody(schemas.corruptEvent, ctx.body);
        try {
          control.corruptEvent(uuid);
        } catch {
          return jsonAnswer(404, { error: `no audit event with uuid ${uuid}` });
        }
        return OK();
      }
      case 'POST clear-faults':
        control.clearFaults();
        return OK();
      case 'POST reset':
        control.clearFaults();
        control.resetCounters();
        return OK();
      default:
        return jsonAnswer(404, { error: `unknown control operation ${key}` });
    }
  } catch (error) {
    if (error instanceof BadControlInput || error instanceof RangeError) return jsonAnswer(400, { error: error.message });
    throw error;
  }
}
