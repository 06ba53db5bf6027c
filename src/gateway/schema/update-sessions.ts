/**
 * Update sessions of the content library: `updateSessionFiles`, `updateSession`, and the
 * `UpdateSession` federation entity. Every path to the upstream (both Query fields and
 * `_entities`) goes through `context.loaders.updateSessionFiles`, so one session asked for many
 * times in one request (aliases, representations) is one upstream call. A file that could not be
 * read is left out with an error at its position (update-sessions/file-rows.ts).
 */
import type { GatewayContext } from '../context.js';
import type { UpdateSessionFileRow } from '../../upstream/types.js';
import { builder } from './builder.js';
import { readableFiles } from './update-sessions/file-rows.js';
import { UpdateSessionFileRef } from './update-sessions/file-types.js';
import { requireSessionId } from './update-sessions/values.js';

interface UpdateSession {
  readonly id: string;
  readonly files: readonly UpdateSessionFileRow[];
}

/**
 * Rejects with NOT_FOUND for an unknown session (the loader's UpstreamError), which GraphQL turns
 * into null plus an error entry on the asking field or entity.
 */
async function loadUpdateSession(id: string, context: GatewayContext): Promise<UpdateSession> {
  const files = await context.loaders.updateSessionFiles.load(id);
  return { id, files };
}

export const UpdateSessionRef = builder.objectRef<UpdateSession>('UpdateSession').implement({
  description: 'Federation entity: other subgraphs may reference an update session by id.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The update session id of the content library.' }),
    files: t.field({
      type: [UpdateSessionFileRef],
      description: 'The files of the session; empty when the caller removed them all.',
      resolve: (session, _args, context, info) => readableFiles(session.files, context, info),
    }),
  }),
});

builder.asEntity(UpdateSessionRef, {
  key: builder.selection<{ id: string }>('id'),
  // async: @apollo/subgraph calls this inside representations.map(), so a synchronous throw
  // would fail every representation of the batch instead of this one.
  resolveReference: async (reference, context) =>
    loadUpdateSession(requireSessionId(reference.id, 'The representation id'), context),
});

builder.queryFields((t) => ({
  updateSessionFiles: t.field({
    type: [UpdateSessionFileRef],
    nullable: { list: true, items: false },
    description:
      'Files of a content library item update session. Null, with an error whose extensions.code is NOT_FOUND, when the session does not exist.',
    args: { updateSessionId: t.arg.id({ required: true, description: 'The update session id.' }) },
    resolve: async (_root, args, context, info) => {
      const id = requireSessionId(args.updateSessionId, 'updateSessionId');
      return readableFiles(await context.loaders.updateSessionFiles.load(id), context, info);
    },
  }),
  updateSession: t.field({
    type: UpdateSessionRef,
    nullable: true,
    description:
      'The update session as an entity (also reachable through federation). Null with NOT_FOUND when it does not exist.',
    args: { id: t.arg.id({ required: true, description: 'The update session id.' }) },
    resolve: (_root, args, context) => loadUpdateSession(requireSessionId(args.id, 'id'), context),
  }),
}));
