/**
 * Content library `/rest/com/<vendor>/...`: session login (POST, HTTP Basic; DELETE logs out) and
 * the update session file list (spec 4.3). Authentication is checked before the parameters, as vAPI does.
 */
import { basicCredentials, cookieValue, headerValue, jsonAnswer, type Answer, type RequestContext } from './http-util.js';
import type { SimulatorState } from './state.js';
import { vapiError, vapiUnauthenticated } from './vapi.js';

export const SESSION_HEADER = 'vmware-api-session-id';

/** The session id sent by header, or by the cookie the login set. */
function presentedSession(ctx: RequestContext): string | undefined {
  return headerValue(ctx.headers, SESSION_HEADER) ?? cookieValue(ctx.headers, SESSION_HEADER);
}

function operationNotFound(state: SimulatorState, allow: string): Answer {
  const answer = vapiError(state.vendor, 405, 'operation_not_found', {
    id: 'vapi.method.not.found',
    defaultMessage: 'Operation not found for this HTTP method.',
  });
  return { ...answer, headers: { ...answer.headers, allow } };
}

export function handleSession(ctx: RequestContext, state: SimulatorState): Answer {
  if (ctx.method === 'DELETE') {
    const id = presentedSession(ctx);
    if (!state.loginSessions.isValid(id) || id === undefined) return vapiUnauthenticated(state.vendor);
    state.loginSessions.delete(id);
    return { status: 200, body: '' };
  }
  if (ctx.method !== 'POST') return operationNotFound(state, 'POST, DELETE');
  if (state.users !== null) {
    const basic = basicCredentials(ctx.headers);
    const known = basic && state.users.some((u) => u.username === basic.user && u.password === basic.password);
    if (!known) return vapiUnauthenticated(state.vendor);
  }
  const id = state.loginSessions.create();
  return jsonAnswer(200, { value: id }, { 'set-cookie': `${SESSION_HEADER}=${id};Path=/rest;HttpOnly` });
}

export function handleFiles(ctx: RequestContext, state: SimulatorState): Answer {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return operationNotFound(state, 'GET');
  if (state.users !== null && !state.loginSessions.isValid(presentedSession(ctx))) {
    return vapiUnauthenticated(state.vendor);
  }
  const id = ctx.url.searchParams.get('update_session_id');
  if (!id) {
    return vapiError(state.vendor, 400, 'invalid_argument', {
      id: 'vapi.data.structure.field.missing',
      defaultMessage: "Structure 'file.list' is missing a field 'update_session_id'.",
      args: ['file.list', 'update_session_id'],
    });
  }
  const files = state.updateSessions.get(id);
  if (!files) {
    return vapiError(state.vendor, 404, 'not_found', {
      id: 'com.vmware.vdcs.cls-main.update_session_not_found',
      defaultMessage: `Update session with identifier ${id} does not exist.`,
      args: [id],
    });
  }
  return jsonAnswer(200, { value: files });
}
