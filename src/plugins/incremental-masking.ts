/**
 * Error masking for the later parts of an incremental (@defer/@stream) result. Yoga's masking
 * maps a result's top-level `errors` only; errors of deferred fragments and streamed items travel
 * in `incremental[].errors` and would leave unmasked: without their contract code, and with the
 * message of whatever was thrown. This applies the same maskError to them.
 */
import { isAsyncIterable, type Plugin } from 'graphql-yoga';

type MaskError = (error: unknown, message: string) => Error;

const MASKED_MESSAGE = 'Unexpected error.';

interface IncrementalItem {
  readonly errors?: readonly unknown[];
}

export function useIncrementalErrorMasking(maskError: MaskError): Plugin {
  return {
    onExecute: () => ({
      onExecuteDone: ({ result }) => {
        if (!isAsyncIterable(result)) return;
        return {
          onNext: ({ result: part, setResult }) => {
            const incremental = 'incremental' in part ? (part.incremental as readonly IncrementalItem[] | undefined) : undefined;
            if (!incremental?.some((item) => item.errors?.length)) return;
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
