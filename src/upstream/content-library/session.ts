/**
 * vAPI session for the content library: one login (HTTP Basic) shared by every request, one login
 * in flight at a time, kept until the service answers 401 (sessions expire without notice).
 */
import type { Logger } from 'pino';
import {
  basicAuthorization,
  reportedRenewal,
  SingleFlight,
  type CredentialLease,
  type CredentialSource,
} from '../credentials.js';
import { untilAborted, type Deadline } from '../deadline.js';
import type { UpstreamEvents } from '../events.js';
import type { UpstreamHttp } from '../http.js';
import { sessionLoginSchema } from './schemas.js';

const SESSION_HEADER = 'vmware-api-session-id';

export interface SessionManagerOptions {
  readonly http: UpstreamHttp;
  readonly vendor: string;
  readonly credentials: { readonly username: string; readonly password: string };
  readonly events?: UpstreamEvents;
}

export class SessionManager implements CredentialSource {
  readonly #options: SessionManagerOptions;
  /** The session id. */
  #current: string | undefined;
  readonly #login = new SingleFlight<string>();
  #stats = { logins: 0, failures: 0 };

  constructor(options: SessionManagerOptions) {
    this.#options = options;
  }

  stats() {
    return { ...this.#stats };
  }

  async acquire(deadline: Deadline, log: Logger): Promise<CredentialLease> {
    const session = this.#current ?? (await untilAborted(this.#login.join(() => this.#create(log)), deadline.signal));
    return {
      headers: { [SESSION_HEADER]: session },
      invalidate: () => {
        if (this.#current === session) this.#current = undefined;
      },
    };
  }

  #create(log: Logger): Promise<string> {
    const { http, vendor, credentials, events } = this.#options;
    this.#stats.logins++;
    return reportedRenewal(events, { service: 'content-library', kind: 'session_login' }, this.#stats, async () => {
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
      this.#current = answer.value;
      return answer.value;
    });
  }
}
