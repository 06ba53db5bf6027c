/** The content library service's operations the gateway uses (vAPI `/rest` flavour), and its session. */
import type { Logger } from 'pino';
import { ErrorCode } from '../../lib/errors.js';
import { basicAuthorization, reportedRenewal, SharedCredential } from '../credentials.js';
import { summarizeIssues } from '../error-mapping.js';
import type { UpstreamHttp } from '../http.js';
import { countValues, DEEPER } from '../schemas.js';
import type { CallOptions, ContentLibraryApi, UpdateSessionFileRow, UpstreamEvents } from '../types.js';
import { fileInfoSchema, fileListSchema, sessionLoginSchema } from './schemas.js';

const VAPI_NOT_FOUND = /\.vapi\.std\.errors\.not_found$/;

export class ContentLibraryClient implements ContentLibraryApi {
  constructor(
    private readonly http: UpstreamHttp,
    private readonly vendor: string,
    /** undefined: no credentials configured, no session header sent. */
    private readonly sessions: SessionManager | undefined,
  ) {}

  async listUpdateSessionFiles(updateSessionId: string, call: CallOptions): Promise<readonly UpdateSessionFileRow[]> {
    const { value: answer } = await this.http.request(
      {
        route: 'update-session-files',
        method: 'GET',
        path: `/rest/com/${this.vendor}/content/library/item/updatesession/file`,
        query: { update_session_id: updateSessionId },
        schema: fileListSchema,
        credentials: this.sessions,
        notFoundMessage: `Update session ${updateSessionId} was not found.`,
        // A vAPI `not_found` says the session is missing; a bare 404 means the path is wrong.
        notFoundType: VAPI_NOT_FOUND,
      },
      call,
    );
    const read = readFileRows(answer.value);
    if (read.unreadable > 0) {
      // Once per answer, however many fields show the session: the problems, never the values.
      call.log.warn(
        {
          code: ErrorCode.UPSTREAM_INVALID_RESPONSE,
          upstream: 'content-library',
          route: 'update-session-files',
          unreadable: read.unreadable,
          files: read.explained,
        },
        'update session files that do not match their documented shape',
      );
    }
    return read.rows;
  }
}

/** A file nested deeper is unreadable: the model's recursion would exhaust the stack. */
export const MAX_FILE_DEPTH = 64;
/** Unreadable files whose problems the log names (where and what, never the values), per answer. */
export const EXPLAINED_PER_ANSWER = 20;

// Shared: a list of many broken files keeps one slot per file, not an object each.
const UNREADABLE: UpdateSessionFileRow = { ok: false };

/** Reads a list's files one by one: one that does not match its model becomes `{ok: false}` in place. */
export function readFileRows(values: readonly unknown[]) {
  const explained: { position: number; problem: string; issues?: ReturnType<typeof summarizeIssues> }[] = [];
  let unreadable = 0;
  const rows = values.map((value, position): UpdateSessionFileRow => {
    const parsed = countValues(value, MAX_FILE_DEPTH) === DEEPER ? undefined : fileInfoSchema.safeParse(value);
    if (parsed?.success) return { ok: true, file: parsed.data };
    if (unreadable++ < EXPLAINED_PER_ANSWER) {
      explained.push(
        parsed
          ? { position, problem: 'does not match its schema', issues: summarizeIssues(parsed.error.issues, 3) }
          : { position, problem: `nested deeper than ${MAX_FILE_DEPTH} levels` },
      );
    }
    return UNREADABLE;
  });
  return { rows, unreadable, explained };
}

/** The vAPI session: one login (HTTP Basic), kept until a 401 (sessions expire without notice). */
export class SessionManager extends SharedCredential<string> {
  #stats = { logins: 0, failures: 0 };

  constructor(
    private readonly http: UpstreamHttp,
    private readonly vendor: string,
    private readonly credentials: { readonly username: string; readonly password: string },
    private readonly events: UpstreamEvents | undefined,
  ) {
    super();
  }

  stats() {
    return { ...this.#stats };
  }

  protected headers(session: string) {
    return { 'vmware-api-session-id': session };
  }

  protected obtain(log: Logger): Promise<string> {
    this.#stats.logins++;
    return reportedRenewal(this.events, { service: 'content-library', kind: 'session_login' }, this.#stats, async () => {
      const { value: answer } = await this.http.request(
        {
          route: 'session',
          method: 'POST',
          path: `/rest/com/${this.vendor}/cis/session`,
          headers: { authorization: basicAuthorization(this.credentials.username, this.credentials.password) },
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
