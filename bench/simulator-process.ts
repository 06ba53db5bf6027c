/**
 * The upstream simulator in a process of its own, so its CPU is not the measured gateway's.
 * Prints one JSON line `{"url", "startedAt"}` once listening; exits when stdin closes (the bench
 * died) or on SIGTERM/SIGINT. Env: BENCH_SIMULATOR_SEED (default 1), BENCH_SIMULATOR_PORT (default 0: any).
 */
import { startSimulator } from '../simulator/index.js';

const seed = Number(process.env['BENCH_SIMULATOR_SEED'] ?? 1);
const startedAt = Date.now();
const port = Number(process.env['BENCH_SIMULATOR_PORT'] ?? 0);
const simulator = await startSimulator({ host: '127.0.0.1', port, seed });
process.stdout.write(`${JSON.stringify({ url: simulator.url, startedAt })}\n`);

const stop = () => void simulator.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
