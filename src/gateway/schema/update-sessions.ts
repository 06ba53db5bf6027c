/** `updateSessionFiles`, `updateSession` and the `UpdateSession` entity through one loader: one call per session. */
import type { GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from '../context.js';
import type { FileInfo } from '../../upstream/content-library/schemas.js';
import type { UpdateSessionFileRow } from '../../upstream/types.js';
import { builder } from './builder.js';
import { reportRowErrors } from './row-errors.js';
import { UpdateSessionFileRef } from './update-sessions/file-types.js';
import { requireSessionId } from './update-sessions/values.js';

/** An unreadable file is left out (a null would null every file), its error naming its position upstream. */
export function readableFiles(rows: readonly UpdateSessionFileRow[], context: object, info: GraphQLResolveInfo): FileInfo[] {
  const files: FileInfo[] = [];
  const unreadable: number[] = [];
  rows.forEach((row, position) => (row.ok ? files.push(row.file) : unreadable.push(position)));
  reportRowErrors(
    context,
    info,
    unreadable,
    (position) => `The update session file at position ${position} of the upstream's list could not be read; it is left out.`,
    (count, from, to) =>
      `${count} more update session files (positions ${from} to ${to} of the upstream's list) could not be read; they are left out.`,
  );
  return files;
}

/** An unknown session rejects with NOT_FOUND: null and an error entry on the asking field or entity. */
const loadUpdateSession = async (id: string, context: GatewayContext) => ({
  id,
  files: await context.loaders.updateSessionFiles.load(id),
});

const UpdateSessionRef = builder.objectRef<Awaited<ReturnType<typeof loadUpdateSession>>>('UpdateSession').implement({
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
