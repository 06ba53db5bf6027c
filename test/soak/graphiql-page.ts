/**
 * GraphiQL driven as a person drives it: pick a tab, type into its variables or headers editor,
 * press the run button, read the result pane (its whole text, copied as a person copies it: the
 * editor only draws the lines on screen).
 */
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Headless and quiet: no first-run UI, no background traffic, no QUIC. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How long one step (a page load, an answer, a first live event) may take on a busy machine. */
const STEP_MS = 20_000;

export interface GraphQLResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** A fresh context (no stored tabs from an earlier page) on the GraphiQL page at `url`. */
export async function openGraphiQL(browser: Browser, url: string): Promise<Page> {
  const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  await page.goto(url);
  await page.locator('button.graphiql-tab-button').first().waitFor();
  return page;
}

/** The operation names on the page's tabs, in order. */
export async function tabTitles(page: Page): Promise<string[]> {
  return page.locator('button.graphiql-tab-button').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('title') ?? ''));
}

/** Makes the tab named `title` the active one. */
export async function selectTab(page: Page, title: string): Promise<void> {
  // By keyboard: the tabs can be dragged to reorder them, and the drag handling swallows a
  // click whose press and release arrive in the same instant, as an automated click's do.
  await page.locator(`button.graphiql-tab-button[title="${title}"]`).focus();
  await page.keyboard.press('Enter');
  await page.locator(`li.graphiql-tab-active > button.graphiql-tab-button[title="${title}"]`).waitFor();
}

/** Replaces the text of the active tab's variables or headers editor, as a person types it. */
export async function typeInto(page: Page, editor: 'variables' | 'headers', text: string): Promise<void> {
  await page.locator(`.graphiql-editor-tools button[data-name="${editor}"]`).click();
  await page.locator('.graphiql-editor-tool .monaco-editor:visible').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

const resultPane = (page: Page) => page.locator('.graphiql-response');

/**
 * Runs the active tab and returns the answer its result pane shows: the answer of a query, or
 * the first event of a subscription (stopped then, as a person stops it).
 */
export async function execute(page: Page): Promise<GraphQLResult> {
  const pane = await resultPane(page).elementHandle();
  // The tab's own (empty) pane, not the one of the tab shown before it.
  await page.waitForFunction((p) => (p?.querySelector('.view-lines')?.textContent ?? '').trim() === '', pane);
  await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).click();
  await page.waitForFunction(
    (p) => !p?.querySelector('.graphiql-spinner') && /"(data|errors)"/.test(p?.querySelector('.view-lines')?.textContent ?? ''),
    pane,
  );
  const stop = page.getByRole('button', { name: 'Stop query (Ctrl-Enter)' });
  if (await stop.isVisible()) {
    await stop.click();
    await page.getByRole('button', { name: 'Execute query (Ctrl-Enter)' }).waitFor();
  }
  const text = await copyResult(page);
  try {
    return JSON.parse(text) as GraphQLResult;
  } catch {
    throw new Error(`the result pane shows no JSON: ${text.slice(0, 500)}`);
  }
}

/** The whole text of the result pane, copied to the clipboard and read back. */
async function copyResult(page: Page): Promise<string> {
  await resultPane(page).locator('.monaco-editor').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('ControlOrMeta+C');
  return page.evaluate(() => navigator.clipboard.readText());
}
