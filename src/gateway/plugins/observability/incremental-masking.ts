/** Yoga masks top-level `errors` only: `incremental[].errors` get the same maskError and log here. */
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Logger } from '../../../lib/logger.js';
import { logFieldError, type LoggedErrors } from './logging.js';

type MaskError = (error: unknown, message: string) => Error;
type IncrementalItem = { readonly errors?: readonly unknown[] };

export function useIncrementalErrorMasking(maskError: MaskError, logged: LoggedErrors): Plugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result }) => {
        if (!isAsyncIterable(result)) return;
        return {
          onNext: ({ result: part, setResult }) => {
            const incremental = 'incremental' in part ? (part.incremental as readonly IncrementalItem[] | undefined) : undefined;
            if (!incremental?.some((item) => item.errors?.length)) return;
            const log = (args.contextValue as { log?: Logger }).log;
            if (log) for (const item of incremental) for (const error of item.errors ?? []) logFieldError(log, error, logged);
            const masked = incremental.map((item) =>
              item.errors?.length ? { ...item, errors: item.errors.map((error) => maskError(error, 'Unexpected error.')) } : item,
            );
            setResult({ ...part, incremental: masked } as typeof part);
          },
        };
      },
    }),
  };
}
