/** The content library service's operations the gateway uses (vAPI `/rest` flavour). */
import { ErrorCode } from '../../lib/errors.js';
import type { UpstreamHttp } from '../http.js';
import type { CallOptions, ContentLibraryApi, UpdateSessionFileRow } from '../types.js';
import { readFileRows } from './file-rows.js';
import { fileListSchema } from './schemas.js';
import type { SessionManager } from './session.js';

/** `sessions` undefined: no credentials configured, no session header sent. */
type ContentLibraryClientOptions = { readonly http: UpstreamHttp; readonly vendor: string; readonly sessions: SessionManager | undefined };

const VAPI_NOT_FOUND = /\.vapi\.std\.errors\.not_found$/;

export class ContentLibraryClient implements ContentLibraryApi {
  constructor(private readonly options: ContentLibraryClientOptions) {}

  async listUpdateSessionFiles(updateSessionId: string, call: CallOptions): Promise<readonly UpdateSessionFileRow[]> {
    const { http, vendor, sessions } = this.options;
    const answer = await http.request(
      {
        route: 'update-session-files',
        method: 'GET',
        path: `/rest/com/${vendor}/content/library/item/updatesession/file`,
        query: { update_session_id: updateSessionId },
        schema: fileListSchema,
        credentials: sessions,
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
