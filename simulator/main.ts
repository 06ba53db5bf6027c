/**
 * Stand-alone simulator (`npm run simulator`). Env: SIMULATOR_PORT (default 4010; 0 = ephemeral),
 * SIMULATOR_HOST (default 127.0.0.1), SIMULATOR_SEED (default 1). Stops cleanly on SIGINT/SIGTERM.
 */
import { DEMO_CLIENT, DEMO_USER, startSimulator } from './index.js';

function integerFromEnv(name: string, fallback: number, min: number, max: number): number {
  const text = process.env[name]?.trim();
  if (!text) return fallback;
  const value = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    console.error(`${name} must be an integer between ${min} and ${max}`);
    process.exit(1);
  }
  return value;
}

const port = integerFromEnv('SIMULATOR_PORT', 4010, 0, 65535);
const seed = integerFromEnv('SIMULATOR_SEED', 1, -(2 ** 31), 2 ** 32 - 1);
const host = process.env['SIMULATOR_HOST']?.trim() || '127.0.0.1';

const simulator = await startSimulator({ host, port, seed }).catch((error: unknown) => {
  console.error(`Upstream simulator could not start on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
console.log(
  `Upstream simulator listening on ${simulator.url} (seed ${seed}) | identity client ${DEMO_CLIENT.id} / ${DEMO_CLIENT.secret}` +
    ` | content library user ${DEMO_USER.username} / ${DEMO_USER.password} | vendor vmware`,
);

let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  console.log(`Upstream simulator stopping (${signal})`);
  simulator.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
