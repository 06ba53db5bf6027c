/** Near misses of a token: what a client that cuts or garbles one would send. */
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Every proper prefix of `text`, and every base64url text that differs from it in one character. */
export function cutsAndChanges(text: string): string[] {
  const variants = Array.from({ length: text.length }, (_, length) => text.slice(0, length));
  for (let at = 0; at < text.length; at++) {
    for (const char of BASE64URL) if (char !== text[at]) variants.push(text.slice(0, at) + char + text.slice(at + 1));
  }
  return variants;
}
