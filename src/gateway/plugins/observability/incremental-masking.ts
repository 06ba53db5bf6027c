/**
 * Error masking for the later parts of an incremental (@defer/@stream) result. Yoga's masking
 * maps a result's top-level `errors` only; errors of deferred fragments and streamed items travel
 * in `incremental[].errors` and would leave unmasked: without their contract code, and with the
 * message of whatever was thrown. This applies the same maskError to them, and logs them with
 * their detail as the single-result error log does.
 */
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Logger } from '../../../lib/logger.js';
import { logFieldError, type LoggedErrors } from './logging.js';

type MaskError = (error: unknown, message: string) => Error;

const MASKED_MESSAGE = 'Unexpected error.';

interface IncrementalItem {
  readonly errors?: readonly unknown[];
}

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
              item.errors?.length ? { ...item, errors: item.errors.map((error) => maskError(error, MASKED_MESSAGE)) } : item,
            );
            setResult({ ...part, incremental: masked } as typeof part);
          },
        };
      },
    }),
  };
}
