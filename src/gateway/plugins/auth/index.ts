import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Config } from '../../../lib/config.js';
import type { Logger } from '../../../lib/logger.js';
import type { SharedStore } from '../../../upstream/shared-store/store.js';
import { ANONYMOUS, type RequestState } from '../../context.js';
import { createPersistedQueryStore, useAutomaticPersistedQueries } from './automatic-persisted-queries.js';
import { callerOf, useCallerAuth } from './caller-auth.js';
import { usePersistedOperationsFile } from './persisted-operations.js';

type AuthConfig = Pick<Config, 'apiKeys' | 'allowAnonymous' | 'jwt' | 'persistedOperations' | 'introspection'>;

function useIntrospectionPolicy(policy: Config['introspection']): Plugin {
  return {
    onValidate: ({ addValidationRule, context }) => {
      if (policy === 'authenticated' && callerOf(context as RequestState).id !== ANONYMOUS.id) return;
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

export function authPlugins(config: AuthConfig, log: Logger, sharedStore?: SharedStore): Plugin[] {
  return [
    // Browsers must send a header a simple cross-site form or GET cannot.
    useCSRFPrevention({ requestHeaders: ['x-graphql-yoga-csrf', 'x-api-key', 'authorization', 'apollo-require-preflight'] }),
    useCallerAuth({ apiKeys: config.apiKeys, allowAnonymous: config.allowAnonymous, jwt: config.jwt, log }) as Plugin,
    config.persistedOperations
      ? usePersistedOperationsFile(config.persistedOperations)
      : useAutomaticPersistedQueries(createPersistedQueryStore(undefined, sharedStore)),
    ...(config.introspection === 'all' ? [] : [useIntrospectionPolicy(config.introspection)]),
  ];
}
