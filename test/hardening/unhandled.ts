/** Collects unhandled rejections and uncaught exceptions while a test file runs. */
export function watchUnhandled(): { readonly errors: unknown[]; stop(): void } {
  const errors: unknown[] = [];
  const record = (error: unknown) => errors.push(error);
  process.on('unhandledRejection', record);
  process.on('uncaughtException', record);
  return {
    errors,
    stop() {
      process.off('unhandledRejection', record);
      process.off('uncaughtException', record);
    },
  };
}

/** Lets pending rejections surface: they are reported after the microtask queue drains. */
export const settleTicks = () => new Promise((resolve) => setTimeout(resolve, 50));
