/**
 * The simulator's node:http server: routes requests, applies fault switches (latency, then a queued
 * failure, then a malformed answer) before normal handling, and counts every answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { SimulatorControl, SimulatorRoute } from './types.js';
import type { SimulatorState } from './state.js';
import { BodyTooLargeError, jsonAnswer, readBody, type Answer, type RequestContext } from './http-util.js';
import { handleAudit } from './audit-route.js';
import { handleFiles, handleSession } from './content-library-route.js';
import { CONTROL_PREFIX, handleControl } from './control-http.js';
import { failureAnswer, malformedAnswer } from './fault-bodies.js';
import { hostileAuditPage, RECORD_KINDS, writeHostileBody } from './hostile.js';
import { grantTypeOf, handleToken } from './token-route.js';
import { handleWireControl } from './wire-log.js';

export function routeOf(pathname: string, vendor: string): SimulatorRoute | undefined {
  if (pathname === '/SAAS/auth/oauthtoken') return 'token';
  if (pathname === '/analytics/reports/audit/' || pathname === '/analytics/reports/audit') return 'audit';
  const rest = `/rest/com/${vendor}`;
  if (pathname === `${rest}/cis/session`) return 'session';
  if (pathname === `${rest}/content/library/item/updatesession/file`) return 'files';
  return undefined;
}

const HANDLERS: Record<SimulatorRoute, (ctx: RequestContext, state: SimulatorState) => Answer> = {
  token: handleToken,
  audit: handleAudit,
  session: handleSession,
  files: handleFiles,
};

const notFound = () => jsonAnswer(404, { error: 'not_found', error_description: 'No resource at this path.' });

/** Waits `ms`, or less if the response closes first (client gone, server closing): then false. */
function delay(ms: number, res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (completed: boolean) => {
      clearTimeout(timer);
      res.off('close', onClose);
      resolve(completed);
    };
    const onClose = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    res.on('close', onClose);
  });
}

export function createSimulatorServer(state: SimulatorState, control: SimulatorControl): Server {
  const write = (res: ServerResponse, answer: Answer, counted: boolean) => {
    if (res.writableEnded || res.destroyed) return;
    if (counted) state.counters.answered(answer.status);
    res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
    res.end(answer.body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://simulator.invalid');
    } catch {
      return write(res, jsonAnswer(400, { error: 'invalid_request' }), true);
    }
    const isControl = url.pathname.startsWith(CONTROL_PREFIX);
    let body: string;
    try {
      body = await readBody(req);
    } catch (error) {
      if (error instanceof BodyTooLargeError) write(res, jsonAnswer(413, { error: 'request_too_large' }), !isControl);
      return;
    }
    const ctx: RequestContext = { method: req.method ?? 'GET', url, headers: req.headers, body };
    if (isControl) return write(res, handleWireControl(ctx, state.wire) ?? handleControl(ctx, control), false);

    const route = routeOf(url.pathname, state.vendor);
    state.wire.record(ctx, route, res);
    if (route === undefined) return write(res, notFound(), true);
    state.counters.call(route);
    if (route === 'token') state.counters.grant(grantTypeOf(ctx) ?? '(none)');

    const latency = state.faults.latencyFor(route);
    if (latency > 0 && !(await delay(latency, res))) return;

    const failure = state.faults.takeFailure(route);
    if (failure) return write(res, failureAnswer(route, failure, state.vendor), true);
    const malform = state.faults.takeMalform(route);
    if (malform) return write(res, malformedAnswer(route, malform), true);
    const hostile = state.faults.takeHostile(route);
    if (hostile && RECORD_KINDS.has(hostile.kind)) return write(res, hostileAuditPage(HANDLERS[route](ctx, state), hostile.kind), true);
    if (hostile) {
      const status = writeHostileBody(res, route, hostile);
      if (status > 0) state.counters.answered(status);
      return;
    }
    write(res, HANDLERS[route](ctx, state), true);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      // Never crash on a bad request: answer 500 and keep serving.
      write(res, jsonAnswer(500, { error: 'server_error' }), true);
    });
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  return server;
}
