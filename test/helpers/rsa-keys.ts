/**
 * RSA key pairs by name, made once per worker: a 2048-bit key costs a noticeable fraction of a
 * second, and a test needs only that its keys differ from one another, not from another file's.
 */
import { generateKeyPairSync, type KeyPairKeyObjectResult } from 'node:crypto';

const made = new Map<string, KeyPairKeyObjectResult>();

export function rsaKeyPair(name: string): KeyPairKeyObjectResult {
  let pair = made.get(name);
  if (!pair) made.set(name, (pair = generateKeyPairSync('rsa', { modulusLength: 2048 })));
  return pair;
}
