/** A JWKS endpoint on loopback, and JWTs signed with its key (RS256). */
import { sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rsaKeyPair } from './rsa-keys.js';

const publicJwk = (key: KeyObject, kid: string) => ({ ...(key.export({ format: 'jwk' }) as object), kid, alg: 'RS256', use: 'sig' });

export class TestIssuer {
  private readonly keys = rsaKeyPair('issuer');
  /** Keys published beside the first one, as a key rotation does. */
  private readonly published: object[] = [];
  private server!: Server;
  url = '';
  /** How often the JWKS has been fetched. */
  fetches = 0;
  async start() {
    const jwk = publicJwk(this.keys.publicKey, 'test-key');
    this.server = createServer((_req, res) => {
      this.fetches++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk, ...this.published] }));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
  }
  /** Publishes a new key under `kid` from the next fetch on; tokens signed with the key it returns name it in their header. */
  publishKey(kid: string): KeyObject {
    const pair = rsaKeyPair(`published ${kid}`);
    this.published.push(publicJwk(pair.publicKey, kid));
    return pair.privateKey;
  }
  token(claims: Record<string, unknown>, key: KeyObject = this.keys.privateKey, header: Record<string, unknown> = {}) {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = `${encode({ alg: 'RS256', typ: 'JWT', kid: 'test-key', ...header })}.${encode({ iat: now, exp: now + 300, ...claims })}`;
    return `${body}.${sign('sha256', Buffer.from(body), key).toString('base64url')}`;
  }
  close() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(resolve));
  }
}
