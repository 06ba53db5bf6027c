/** The row errors resolvers queued, appended to the result, or to the incremental part that carries their rows. */
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { takeRowErrors } from '../../schema/row-errors.js';

export function useRowErrors(): Plugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        const context = args.contextValue as object;
        if (!isAsyncIterable(result)) {
          const pending = takeRowErrors(context);
          if (pending) setResult({ ...result, errors: [...(result.errors ?? []), ...pending] });
          return;
        }
        // @defer/@stream: a page is read before the part that carries it is sent, so its row errors go with it.
        return {
          onNext: ({ result: part, setResult: setPart }) => {
            const pending = takeRowErrors(context);
            if (!pending) return;
            const [first, ...others] = 'incremental' in part && part.incremental?.length ? part.incremental : [];
            if (first) {
              const incremental = [{ ...first, errors: [...(first.errors ?? []), ...pending] }, ...others];
              setPart({ ...part, incremental } as typeof part);
            } else {
              setPart({ ...part, errors: [...(part.errors ?? []), ...pending] });
            }
          },
        };
      },
    }),
  };
}
