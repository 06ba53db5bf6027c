/**
 * The reference server (reference-server.ts) in a process of its own, so its CPU can be measured
 * like the gateway's. Env: IDENTITY_BASE_URL, IDENTITY_CLIENT_ID, IDENTITY_CLIENT_SECRET.
 * Prints one JSON line `{"url"}` once it holds its token and listens; exits on SIGTERM/SIGINT.
 */
import { startReferenceServer } from './reference-server.js';

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const server = await startReferenceServer({
  identityUrl: required('IDENTITY_BASE_URL'),
  clientId: required('IDENTITY_CLIENT_ID'),
  clientSecret: required('IDENTITY_CLIENT_SECRET'),
});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);

const stop = () => void server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
