/**
 * The files of one list answer are read one by one: a file that does not match its model is kept
 * in place as unreadable, the others are read as usual, and the log says why without the values.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXPLAINED_PER_ANSWER, MAX_FILE_DEPTH, readFileRows } from '../../src/upstream/content-library/client.js';
import { scriptedEnv, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { startUpstreamHarness, type UpstreamHarness } from '../helpers/upstream.js';

const good = (name: string) => ({ name, source_type: 'PUSH', size: '4831838208' });
const read = (name: string) => ({ ok: true, file: { name, source_type: 'PUSH', size: 4_831_838_208 } });
/** Arrays nested `levels` deep around a null, a scalar that adds no level. */
const nested = (levels: number): unknown => (levels === 0 ? null : [nested(levels - 1)]);

describe('readFileRows', () => {
  it('keeps every file in place, each read by the model or unreadable on its own', () => {
    const result = readFileRows([good('a'), { name: 'b', source_type: 'PUSH', size: -1 }, null, good('d')]);
    expect(result.rows).toEqual([read('a'), { ok: false }, { ok: false }, read('d')]);
    expect(result.unreadable).toBe(2);
    expect(result.explained).toEqual([
      { position: 1, problem: 'does not match its schema', issues: [expect.objectContaining({ path: 'size', code: 'too_small' })] },
      { position: 2, problem: 'does not match its schema', issues: [expect.objectContaining({ path: '', code: 'invalid_type' })] },
    ]);
  });

  it(`reads a file nested ${MAX_FILE_DEPTH} levels deep, and refuses one level more without validating it`, () => {
    // The file is level 1, the arrays of its `extra` (which the model ignores) levels 2 and on.
    const atLimit = { ...good('a'), extra: nested(MAX_FILE_DEPTH - 1) };
    const beyond = { ...good('b'), extra: nested(MAX_FILE_DEPTH) };
    const result = readFileRows([atLimit, beyond]);
    expect(result.rows).toEqual([read('a'), { ok: false }]);
    expect(result.explained).toEqual([{ position: 1, problem: `nested deeper than ${MAX_FILE_DEPTH} levels` }]);
  });

  it('names three issues per file, never their values', () => {
    const { explained } = readFileRows([{ name: 1, source_type: 'secret-value', size: 'secret-size', status: 7, keep_in_storage: 'secret' }]);
    expect(explained[0]?.issues).toHaveLength(3);
    expect(JSON.stringify(explained)).not.toContain('secret');
  });

  it(`explains the first ${EXPLAINED_PER_ANSWER} unreadable files of an answer and counts the rest`, () => {
    const values = Array.from({ length: 2 * EXPLAINED_PER_ANSWER + 1 }, (_, i) => (i % 2 === 0 ? { name: i } : good(`f${i}`)));
    const result = readFileRows(values);
    expect(result.unreadable).toBe(EXPLAINED_PER_ANSWER + 1);
    expect(result.explained.map((file) => file.position)).toEqual(Array.from({ length: EXPLAINED_PER_ANSWER }, (_, i) => 2 * i));
    expect(result.rows.filter((row) => row.ok)).toHaveLength(EXPLAINED_PER_ANSWER);
  });
});

describe('listUpdateSessionFiles over HTTP', () => {
  let upstream: ScriptedUpstream;
  let harness: UpstreamHarness;
  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    harness = await startUpstreamHarness({ env: scriptedEnv(upstream) });
  });
  beforeEach(() => upstream.clear());
  afterAll(async () => {
    await harness.close();
    await upstream.close();
  });
  const warnings = () => harness.memory.lines().filter((line) => line.msg === 'update session files that do not match their documented shape');

  it('answers a bad file in place and logs it once', async () => {
    upstream.answerNext('files', { body: { value: [good('a'), { ...good('b'), checksum_info: { algorithm: 'MD5' } }, good('c')] } });
    const rows = await harness.upstreams.contentLibrary!.listUpdateSessionFiles('s', harness.call);
    expect(rows).toEqual([read('a'), { ok: false }, read('c')]);
    expect(warnings()).toEqual([
      expect.objectContaining({
        level: 40,
        code: 'UPSTREAM_INVALID_RESPONSE',
        upstream: 'content-library',
        route: 'update-session-files',
        unreadable: 1,
        files: [{ position: 1, problem: 'does not match its schema', issues: [expect.objectContaining({ path: 'checksum_info.checksum' })] }],
      }),
    ]);
  });

  it('logs nothing for an answer whose files all match', async () => {
    const before = warnings().length;
    upstream.answerNext('files', { body: { value: [good('a')] } });
    await expect(harness.upstreams.contentLibrary!.listUpdateSessionFiles('s', harness.call)).resolves.toEqual([read('a')]);
    expect(warnings()).toHaveLength(before);
  });
});
