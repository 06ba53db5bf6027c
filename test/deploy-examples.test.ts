/**
 * The deploy examples (deploy/kubernetes.yaml, deploy/compose.yaml) parse, set only variables the
 * configuration reads, probe paths the gateway answers, and wait before stopping as long as the
 * gateway keeps serving once told to stop.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../src/lib/config.js';
import { createGateway } from '../src/gateway/yoga.js';
import { createUpstreams } from '../src/upstream/index.js';
import { createLogger } from '../src/lib/logger.js';

const read = (file: string) => readFileSync(new URL(`../deploy/${file}`, import.meta.url), 'utf8');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Node = any;
const documents = (file: string): Node[] =>
  parseAllDocuments(read(file), { merge: true }).map((doc) => {
    expect(doc.errors).toEqual([]);
    return doc.toJS();
  });

const kubernetes = documents('kubernetes.yaml');
const compose = documents('compose.yaml')[0];
const gatewayDeployment = kubernetes.find((d) => d.kind === 'Deployment' && d.metadata.name === 'identity-gateway');
const gatewayContainer = gatewayDeployment.spec.template.spec.containers[0];
const kubernetesEnv: Record<string, string | undefined> = Object.fromEntries(
  gatewayContainer.env.map((e: Node) => [e.name, e.value ?? 'from-secret']),
);
const composeGateways = Object.entries(compose.services as Record<string, Node>).filter(([, s]) => s.image === 'identity-content-gateway:latest');

/** What a probe path answers on a gateway built from the example's variables. */
async function probe(env: Record<string, string | undefined>, path: string): Promise<number> {
  const config = loadConfig({ ...env } as NodeJS.ProcessEnv);
  const upstreams = createUpstreams(config);
  try {
    const yoga = createGateway({ config, upstreams, log: createLogger({ level: 'silent' }) });
    return (await yoga.fetch(`http://gateway.test${path}`)).status;
  } finally {
    await upstreams.close();
  }
}

/** Compose's `${NAME:-default}`, as compose reads it with NAME unset. */
const composeValue = (value: string) => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

describe('deploy examples', () => {
  it('runs three gateway replicas on one Redis, in Kubernetes and in compose', () => {
    expect(gatewayDeployment.spec.replicas).toBe(3);
    expect(kubernetes.some((d) => d.kind === 'Service' && d.metadata.name === 'redis')).toBe(true);
    expect(kubernetes.some((d) => d.kind === 'Deployment' && d.metadata.name === 'redis')).toBe(true);
    expect(kubernetesEnv['REDIS_URL']).toBe('redis://redis:6379');
    expect(composeGateways).toHaveLength(3);
    expect(compose.services.redis).toBeDefined();
    for (const [, service] of composeGateways) expect(service.environment.REDIS_URL).toBe('redis://redis:6379');
  });

  it('sets only variables the configuration reads, with values it accepts', () => {
    const composeEnvs = composeGateways.map(([, s]) => Object.fromEntries(Object.entries(s.environment as Record<string, string>).map(([k, v]) => [k, composeValue(v)])));
    for (const env of [kubernetesEnv, ...composeEnvs]) {
      for (const name of Object.keys(env)) expect(CONFIG_VARIABLES).toContain(name);
      const config = loadConfig(env as NodeJS.ProcessEnv);
      expect(config.redis?.url).toBe('redis://redis:6379');
    }
  });

  it('probes paths the gateway answers, and waits before stopping as long as the gateway drains', async () => {
    expect(gatewayContainer.readinessProbe.httpGet.path).toBe('/readyz');
    expect(await probe(kubernetesEnv, gatewayContainer.readinessProbe.httpGet.path)).toBe(200);
    expect(await probe(kubernetesEnv, gatewayContainer.livenessProbe.httpGet.path)).toBe(200);
    expect(await probe(kubernetesEnv, '/nothing-here')).toBe(404);
    expect(gatewayContainer.lifecycle.preStop.sleep.seconds * 1000).toBe(Number(kubernetesEnv['SHUTDOWN_DELAY_MS']));
    const grace = (Number(kubernetesEnv['SHUTDOWN_DELAY_MS']) * 2 + Number(kubernetesEnv['SHUTDOWN_GRACE_MS'])) / 1000;
    expect(gatewayDeployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(grace);
    for (const [, service] of composeGateways) {
      const check = service.healthcheck.test.join(' ');
      const path = /127\.0\.0\.1:4000(\/[a-z]+)/.exec(check)![1]!;
      expect(await probe(composeValueEnv(service.environment), path)).toBe(200);
    }
  });
});

function composeValueEnv(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, composeValue(v)]));
}
