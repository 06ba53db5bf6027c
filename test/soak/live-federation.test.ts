/**
 * The live subscription through a federation router: Hive Gateway serves a supergraph composed
 * from this gateway's subgraph SDL and subscribes to it over SSE.
 */
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { subgraphSdl } from '../../src/gateway/schema/index.js';
import { ROUTER_START_MS, runHiveGateway, type RouterProcess } from '../helpers/routers.js';
import { LIVE_QUERY, Received, registered, sleep, sseClient, startLiveServer, type LivePayload, type LiveServer } from '../live/live-server.js';

let server: LiveServer;
let router: RouterProcess | undefined;
const accepts: string[] = [];

beforeAll(async () => {
  server = await startLiveServer({
    onRequest: (request) => void accepts.push(String(request.headers.accept)),
  });
  // Named `content`: the router configuration passes each caller's key on to that subgraph,
  // which authenticates it as usual.
  const composed = composeServices([{ name: 'content', typeDefs: parse(subgraphSdl()), url: server.url }]);
  if (compositionHasErrors(composed)) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  router = await runHiveGateway({
    configPath: 'docs/routers/hive-gateway.caller-credential.config.ts',
    supergraphSdl: composed.supergraphSdl,
  });
}, ROUTER_START_MS + 30_000);

afterAll(async () => {
  await router?.stop();
  await server?.close();
});

it('delivers live audit records through Hive Gateway, which subscribes to the subgraph over SSE', async () => {
  const iterator = sseClient(router!.url).iterate({ query: LIVE_QUERY, variables: { filter: { objectType: 'Group' } } });
  const received = await registered(server, () => new Received(iterator as AsyncIterableIterator<LivePayload>));
  await sleep(50);
  const inserted = server.sim.control.insertEvents(3, { objectType: 'Group' }).map((r) => r.uuid);
  await received.until((r) => r.uuids.length >= 3, 10_000);
  expect(received.errors).toEqual([]);
  expect(received.uuids.sort()).toEqual(inserted.sort());
  expect(accepts.some((accept) => accept.includes('text/event-stream'))).toBe(true);
  await iterator.return?.();
}, 30_000);
