/** The environment that points a gateway at a simulator with its demo credentials. */
import { DEMO_CLIENT, DEMO_USER, type Simulator } from '../../simulator/index.js';

export function simulatorEnv(sim: Simulator): Record<string, string> {
  return {
    IDENTITY_BASE_URL: sim.url,
    IDENTITY_CLIENT_ID: DEMO_CLIENT.id,
    IDENTITY_CLIENT_SECRET: DEMO_CLIENT.secret,
    CONTENT_LIBRARY_URL: sim.url,
    CONTENT_LIBRARY_USERNAME: DEMO_USER.username,
    CONTENT_LIBRARY_PASSWORD: DEMO_USER.password,
  };
}
