/** The content library's vAPI session: one login (HTTP Basic), kept until a 401 (sessions expire without notice). */
import type { Logger } from 'pino';
import { basicAuthorization, reportedRenewal, SharedCredential } from '../credentials.js';
import type { UpstreamEvents } from '../events.js';
import type { UpstreamHttp } from '../http.js';
import { sessionLoginSchema } from './schemas.js';

interface SessionManagerOptions {
  readonly http: UpstreamHttp;
  readonly vendor: string;
  readonly credentials: { readonly username: string; readonly password: string };
  readonly events?: UpstreamEvents;
}

export class SessionManager extends SharedCredential<string> {
  #stats = { logins: 0, failures: 0 };

  constructor(private readonly options: SessionManagerOptions) {
    super();
  }

  stats() {
    return { ...this.#stats };
  }

  protected headers(session: string) {
    return { 'vmware-api-session-id': session };
  }

  protected obtain(log: Logger): Promise<string> {
    const { http, vendor, credentials, events } = this.options;
    this.#stats.logins++;
    return reportedRenewal(events, { service: 'content-library', kind: 'session_login' }, this.#stats, async () => {
      const answer = await http.request(
        {
          route: 'session',
          method: 'POST',
          path: `/rest/com/${vendor}/cis/session`,
          headers: { authorization: basicAuthorization(credentials.username, credentials.password) },
          schema: sessionLoginSchema,
          credentialRoute: true,
        },
        { log },
      );
      this.current = answer.value;
      return answer.value;
    });
  }
}
