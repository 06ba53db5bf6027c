/**
 * The codegen set-up the README documents works on the client schema: with strictScalars and the
 * scalar mapping it generates the client programs' types (committed, and current); without the
 * mapping strictScalars stops. The shipped possibleTypes cover every union and interface.
 */
import { readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { isAbstractType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { clientSchemaOf } from '../../codegen/client-schema.js';
import { schema } from '../../src/gateway/schema/index.js';
import config from './codegen.js';

const committed = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const [[target, output]] = Object.entries(config.generates) as [[string, { plugins: string[]; config: Record<string, unknown> }]];

describe('documented codegen set-up', { timeout: 30_000 }, () => {
  it('generates the committed operation types with strictScalars: DateTime string, SafeInt number, JSON unknown', async () => {
    const [file] = await generate({ ...config, cwd: process.cwd() }, false);
    expect(file?.filename).toContain(target);
    expect(file?.content).toBe(committed(target));
    expect(file?.content).toMatch(/DateTime: \{ input: string; output: string; \}|timestamp: string/);
  });

  it('stops without the scalar mapping, as strictScalars should', async () => {
    const { scalars: _dropped, ...rest } = output.config;
    const unmapped = { ...config, cwd: process.cwd(), generates: { [target]: { ...output, config: rest } } };
    await expect(generate(unmapped, false)).rejects.toThrow(/DateTime|scalar/i);
  });
});

describe('schema/possible-types.json', () => {
  it('lists every union and interface of the client schema with all its members', () => {
    const client = clientSchemaOf(schema);
    const expected = Object.fromEntries(
      Object.values(client.getTypeMap())
        .filter(isAbstractType)
        .filter((type) => !type.name.startsWith('__'))
        .map((type) => [type.name, client.getPossibleTypes(type).map((member) => member.name).sort()]),
    );
    const shipped = JSON.parse(committed('schema/possible-types.json')) as { possibleTypes: Record<string, string[]> };
    expect(Object.keys(expected).sort()).toEqual(['AuditEvent', 'AuditRecord']);
    expect(Object.fromEntries(Object.entries(shipped.possibleTypes).map(([name, members]) => [name, [...members].sort()]))).toEqual(expected);
  });

  it('leaves the federation internals out of the client schema, and keeps them for routers', () => {
    const client = committed('schema/schema.graphql');
    for (const internal of ['_entities', '_service', '_Any', '_Entity']) expect(client).not.toContain(internal);
    expect(committed('schema/subgraph.graphql')).toMatch(/type UpdateSession\s+@key\(fields: "id"\)/);
    expect(client).toMatch(/^directive @stream\(/m);
  });
});
