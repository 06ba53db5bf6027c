/**
 * vAPI session for the content library: one login (HTTP Basic) shared by every request, one login
 * in flight at a time, kept until the service answers 401 (sessions expire without notice).
 */
import type { Logger } from 'pino';
import { UpstreamError } from '../../lib/errors.js';
import { basicAuthorization, SingleFlight, type CredentialLease, type CredentialSource } from '../credentials.js';
import { untilAborted, type Deadline } from '../deadline.js';
import { emit, type UpstreamEvents } from '../events.js';
import type { UpstreamHttp } from '../http.js';
import { sessionLoginSchema } from './schemas.js';

export const SESSION_HEADER = 'vmware-api-session-id';

export interface SessionStats {
  /** Login requests made, successful or not. */
  readonly logins: number;
  readonly failures: number;
}

export interface SessionManagerOptions {
  readonly http: UpstreamHttp;
  readonly vendor: string;
  readonly credentials: { readonly username: string; readonly password: string };
  readonly events?: UpstreamEvents;
}

interface Session {
  readonly id: string;
}

export class SessionManager implements CredentialSource {
  readonly #options: SessionManagerOptions;
  #current: Session | undefined;
  readonly #login = new SingleFlight<Session>();
  #stats = { logins: 0, failures: 0 };

  constructor(options: SessionManagerOptions) {
    this.#options = options;
  }

  stats(): SessionStats {
    return { ...this.#stats };
  }

  async acquire(deadline: Deadline, log: Logger): Promise<CredentialLease> {
    const session = this.#current ?? (await untilAborted(this.#login.join(() => this.#create(log)), deadline.signal));
    return {
      headers: { [SESSION_HEADER]: session.id },
      invalidate: () => {
        if (this.#current === session) this.#current = undefined;
      },
    };
  }

  async #create(log: Logger): Promise<Session> {
    const { http, vendor, credentials, events } = this.#options;
    this.#stats.logins++;
    const started = performance.now();
    try {
      // Not tied to any caller's signal: others may be waiting for this very login.
      const answer = await http.request(
        {
          route: 'session',
          method: 'POST',
          path: `/rest/com/${vendor}/cis/session`,
          headers: { authorization: basicAuthorization(credentials.username, credentials.password) },
          schema: sessionLoginSchema,
          credentialRoute: true,
          retryLikeGet: true,
        },
        { log },
      );
      const session: Session = { id: answer.value };
      this.#current = session;
      emit(events?.onCredentialRenewal, {
        service: 'content-library',
        kind: 'session_login',
        outcome: 'success',
        durationMs: Math.round(performance.now() - started),
      });
      return session;
    } catch (error) {
      this.#stats.failures++;
      emit(events?.onCredentialRenewal, {
        service: 'content-library',
        kind: 'session_login',
        // Stryker disable next-line ConditionalExpression,StringLiteral: the HTTP layer rejects with an UpstreamError only
        outcome: error instanceof UpstreamError ? error.code : 'UPSTREAM_UNAVAILABLE',
        durationMs: Math.round(performance.now() - started),
      });
      throw error;
    }
  }
}
