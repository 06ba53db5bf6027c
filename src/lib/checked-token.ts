/** Tokens handed out (cursors, resume tokens): base64url of a payload and its CRC-32, which tells one cut short or altered. */
import { crc32 } from 'node:zlib';

export const CHECKSUM_BYTES = 4;

/** Writes the checksum of `buffer[0, end)` at `end`; the token is base64url of both. */
export function sealToken(buffer: Buffer, end: number): string {
  return buffer.toString('base64url', 0, buffer.writeUInt32BE(crc32(buffer.subarray(0, end)), end));
}

/** The payload of a sealed token, or undefined when it is too long, spelt otherwise than sealToken spells it, or altered. */
export function openToken(token: string, maxChars: number): Buffer | undefined {
  if (token.length > maxChars) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  // Node's decoder skips foreign characters and reads the spare bits of the last one freely: only our spelling is one.
  if (bytes.length < CHECKSUM_BYTES || bytes.toString('base64url') !== token) return undefined;
  const end = bytes.length - CHECKSUM_BYTES;
  return crc32(bytes.subarray(0, end)) === bytes.readUInt32BE(end) ? bytes.subarray(0, end) : undefined;
}
