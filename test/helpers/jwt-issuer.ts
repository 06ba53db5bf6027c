/** A JWKS endpoint on loopback, and JWTs signed with its key (RS256). */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class TestIssuer {
  private readonly keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  private server!: Server;
  url = '';
  async start() {
    const jwk = { ...(this.keys.publicKey.export({ format: 'jwk' }) as object), kid: 'test-key', alg: 'RS256', use: 'sig' };
    this.server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`;
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
