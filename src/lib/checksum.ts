/** A CRC-32 at the end of tokens handed out (cursors, resume tokens): it tells one cut short or altered. */
import { crc32 } from 'node:zlib';

export const CHECKSUM_BYTES = 4;

/** Writes the checksum of `buffer[0, end)` at `end`; returns the end of the checksum. */
export function writeChecksum(buffer: Buffer, end: number): number {
  return buffer.writeUInt32BE(crc32(buffer.subarray(0, end)), end);
}

/** The bytes before the checksum, or undefined when the checksum does not match them. */
export function checkedPayload(bytes: Buffer): Buffer | undefined {
  if (bytes.length < CHECKSUM_BYTES) return undefined;
  const end = bytes.length - CHECKSUM_BYTES;
  const payload = bytes.subarray(0, end);
  return crc32(payload) === bytes.readUInt32BE(end) ? payload : undefined;
}
