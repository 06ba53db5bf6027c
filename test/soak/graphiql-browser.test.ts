/**
 * The shipped GraphiQL page in headless Chromium: every example tab runs and its result pane shows
 * data and no error, the live tab a new audit record; in demo mode as it opens, and in upstream
 * mode once the caller's key is typed into the headers editor.
 *
 * Needs Debian's chromium at /usr/bin/chromium. Without it the file is skipped with one line, and
 * under CI=true it fails instead.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSessionIds } from '../../src/demo.js';
import { exampleOperations, type ExampleOperation } from '../../src/gateway/examples/index.js';
import { SESSION_ID_PLACEHOLDER } from '../../src/gateway/examples/index.js';
import { CHROMIUM, CHROMIUM_ARGS, execute, openGraphiQL, selectTab, tabTitles, typeInto, type GraphQLResult } from './graphiql-page.js';
import { startDemoGateway, startUpstreamGateway, type ServedGateway } from './served-gateway.js';

const missing = !existsSync(CHROMIUM);
const required = process.env['CI'] === 'true';
if (missing && !required) console.log(`test/soak/graphiql-browser.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

const API_KEY = 'graphiql-browser-key';

/** The tab GraphiQL opens for an example is titled with its operation name. */
const titleOf = (example: ExampleOperation) => /^(?:query|subscription)\s+(\w+)/m.exec(example.query)![1]!;
const isSubscription = (example: ExampleOperation) => /^subscription\b/m.test(example.query);

/** What a person sees in a tab's result pane when it worked: its fields filled, no error. */
function expectAnswered(example: ExampleOperation, result: GraphQLResult) {
  expect(result.errors, example.name).toBeUndefined();
  const fields = Object.entries(result.data ?? {});
  expect(fields.length, example.name).toBeGreaterThan(0);
  for (const [field, value] of fields) {
    expect(value, `${example.name}: ${field}`).toBeTruthy();
    // Each connection shows rows, each list items, the live tab a record with its uuid.
    const rows = Array.isArray(value) ? value : ((value as { edges?: unknown[] }).edges ?? [value]);
    expect(rows.length, `${example.name}: ${field}`).toBeGreaterThan(0);
  }
  if (isSubscription(example)) {
    const added = result.data!['auditEventAdded'] as { resumeAfter: string; node: { uuid: string } };
    expect(added.node.uuid).toMatch(/^[\w-]{8,}$/);
    expect(added.resumeAfter).toBeTruthy();
  }
}

/** Opens the page and checks that it offers every example as a tab, in order. */
async function openOnExamples(browser: Browser, gateway: ServedGateway, examples: readonly ExampleOperation[]): Promise<Page> {
  const page = await openGraphiQL(browser, gateway.url);
  expect(await tabTitles(page)).toEqual(examples.map(titleOf));
  return page;
}

// About 10 s a test on a quiet machine; the bounds leave room for a machine busy with other work.
describe.skipIf(missing && !required)('GraphiQL in Chromium', { timeout: 90_000 }, () => {
  let browser: Browser | undefined;
  let demo: ServedGateway | undefined;
  let upstream: ServedGateway | undefined;
  beforeAll(async () => {
    if (missing) throw new Error(`CI=true: the GraphiQL browser test needs Chromium at ${CHROMIUM} (apt-get install chromium)`);
    const started = await Promise.allSettled([
      // Playwright gives each launch a fresh profile directory of its own and removes it on close.
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }).then((b) => (browser = b)),
      startDemoGateway().then((g) => (demo = g)),
      startUpstreamGateway(API_KEY).then((g) => (upstream = g)),
    ]);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([browser?.close(), demo?.close(), upstream?.close()]);
  });

  it('demo mode: every example tab runs as the page opens, data and no error, the live tab a new record', async () => {
    const examples = exampleOperations(demoSessionIds);
    const page = await openOnExamples(browser!, demo!, examples);
    for (const example of examples) {
      await selectTab(page, titleOf(example));
      expectAnswered(example, await execute(page));
    }
  });

  it('upstream mode with an API key: every example tab runs once the key is in its headers editor', async () => {
    const examples = exampleOperations();
    // The update session tabs ask for an id of one's own content library: here the simulator's.
    const sessionVariables = new Map(exampleOperations(demoSessionIds).map((op) => [op.name, op.variables]));
    const page = await openOnExamples(browser!, upstream!, examples);
    for (const example of examples) {
      await selectTab(page, titleOf(example));
      await typeInto(page, 'headers', JSON.stringify({ 'x-api-key': API_KEY }));
      if (JSON.stringify(example.variables ?? {}).includes(SESSION_ID_PLACEHOLDER)) {
        await typeInto(page, 'variables', JSON.stringify(sessionVariables.get(example.name)));
      }
      expectAnswered(example, await execute(page));
    }
  });
});
