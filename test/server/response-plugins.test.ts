/**
 * The plugins that answer a request before or instead of an operation, each in a Yoga of its own
 * (no gateway): the 406 for an Accept header the answer cannot meet (src/gateway/plugins/compat/coded-refusals.ts)
 * and the /healthz and /readyz probes (probes.ts). Through the whole gateway: http-edge.test.ts.
 */
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useNotAcceptable } from '../../src/gateway/plugins/compat/coded-refusals.js';
import { useProbe } from '../../src/gateway/plugins/compat/probes.js';

const schema = createSchema({
  typeDefs: /* GraphQL */ `
    type Query { answer: Int }
    type Subscription { tick: Int }
  `,
  resolvers: {
    Query: { answer: () => 42 },
    Subscription: {
      tick: {
        async *subscribe() {
          yield { tick: 1 };
        },
      },
    },
  },
});

/** Called in each test: a plugin made while the file is collected would be made before a mutant is active. */
const yogaWith = (plugins: Plugin[]) => createYoga({ schema, logging: false, plugins, healthCheckEndpoint: ' ', landingPage: false });

describe('a request that accepts no media type its answer can take', () => {
  const ask = (query: string, accept: string) =>
    yogaWith([useNotAcceptable(), useDeferStream()]).fetch('http://yoga.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query }),
    });
  const refusal = (message: string) => ({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
  const naming = (mediaTypes: string) =>
    refusal(`The Accept header allows none of the media types this request can be answered with: ${mediaTypes}.`);
  const ALL = 'application/graphql-response+json, application/json, multipart/mixed, text/event-stream';

  it('gets a 406 in JSON naming, once each and in order, the media types it could ask for', async () => {
    for (const accept of ['image/png', 'image/png, image/gif, text/plain']) {
      const response = await ask('{ answer }', accept);
      expect(response.status).toBe(406);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.json()).toEqual(naming(ALL));
    }
  });

  it('names the event stream for a subscription asked for as JSON', async () => {
    const response = await ask('subscription { tick }', 'application/json');
    expect(response.status).toBe(406);
    expect(await response.json()).toEqual(naming('text/event-stream'));
  });

  it('names the media types that carry parts for an incremental answer asked for as JSON', async () => {
    const response = await ask('{ ... @defer { answer } }', 'application/json');
    expect(response.status).toBe(406);
    expect(await response.json()).toEqual(naming('multipart/mixed, text/event-stream'));
  });

  it('says that only UTF-8 is answered when every media type it allows is in another charset', async () => {
    const response = await ask('{ answer }', 'application/json; charset=iso-8859-1');
    expect(response.status).toBe(406);
    expect(await response.json()).toEqual(refusal('The Accept header allows no media type in UTF-8, the only charset the gateway answers in.'));
  });

  it.each(['application/json', '*/*', 'image/png, application/graphql-response+json'])('leaves a request that accepts %s to Yoga', async (accept) => {
    const response = await ask('{ answer }', accept);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { answer: 42 } });
  });
});

describe('a probe', () => {
  const probeYoga = (isUp: () => boolean) => yogaWith([useProbe('/readyz', isUp)]);

  it.each(['/readyz', '/readyz?cache-buster=1'])('answers %s with 200 and no body while up, 503 while not', async (path) => {
    let up = true;
    const yoga = probeYoga(() => up);
    const ready = await yoga.fetch(`http://yoga.test${path}`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe('');
    up = false;
    const down = await yoga.fetch(`http://yoga.test${path}`);
    expect(down.status).toBe(503);
    expect(await down.text()).toBe('');
  });

  it.each(['/readyz/', '/graphql?query=%7Banswer%7D&x=/readyz', '/other/readyz'])('leaves %s to Yoga, never asking whether it is up', async (path) => {
    let asked = 0;
    const response = await probeYoga(() => (asked++, false)).fetch(`http://yoga.test${path}`, { headers: { accept: 'application/json' } });
    expect(response.status).not.toBe(503);
    expect(asked).toBe(0);
  });

  it('leaves an operation to Yoga', async () => {
    const response = await probeYoga(() => false).fetch('http://yoga.test/graphql?query=%7Banswer%7D', { headers: { accept: 'application/json' } });
    expect(await response.json()).toEqual({ data: { answer: 42 } });
  });
});
