/**
 * The codegen set-up the README's client section documents: the client schema, the scalar
 * mapping, and strictScalars so a new scalar is never silently `any`. Writes the operation types
 * of the client programs in this folder (committed; codegen.test.ts checks they are current).
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

export const scalars = { DateTime: 'string', SafeInt: 'number', JSON: 'unknown' } as const;

const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: 'test/clients/operations.graphql',
  generates: {
    'test/clients/generated/operations.ts': {
      plugins: ['typescript-operations'],
      config: { strictScalars: true, scalars, enumsAsTypes: true, useTypeImports: true },
    },
  },
  silent: true,
};

export default config;
