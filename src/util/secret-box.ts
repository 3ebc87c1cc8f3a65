/**
 * Secrets at rest (a workspace's service API key): AES-256-GCM from `node:crypto`, with key
 * rotation. Several keys may be listed; the first encrypts, any listed key decrypts, and a box
 * names the key that sealed it (by a short fingerprint, never the key), so re-encrypting with
 * the first key is a read and a write.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = "v1";
const KEY_BYTES = 32;
const IV_BYTES = 12;

/** An encryption key and its fingerprint (the first 8 hex digits of its SHA-256). */
export interface SealingKey {
  readonly id: string;
  readonly key: Buffer;
}

export class SecretBoxError extends Error {
  override readonly name = "SecretBoxError";
}

/** Keys from base64 strings (32 bytes each), in order: the first one encrypts. */
export function sealingKeys(base64Keys: readonly string[]): SealingKey[] {
  if (base64Keys.length === 0) throw new SecretBoxError("no encryption key is set");
  return base64Keys.map((b64, i) => {
    const key = Buffer.from(b64.trim(), "base64");
    if (key.length !== KEY_BYTES || key.toString("base64") !== b64.trim()) {
      throw new SecretBoxError(`encryption key ${i + 1} is not 32 bytes of base64`);
    }
    return { id: createHash("sha256").update(key).digest("hex").slice(0, 8), key };
  });
}

/** `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts); the key id is authenticated too. */
export function seal(plaintext: string, keys: readonly SealingKey[]): string {
  const [first] = keys;
  if (!first) throw new SecretBoxError("no encryption key is set");
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", first.key, iv);
  cipher.setAAD(Buffer.from(`${VERSION}.${first.id}`));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
  return [VERSION, first.id, ...parts].join(".");
}

/** The sealed text. Throws SecretBoxError when its key is not listed or it was tampered with. */
export function open(box: string, keys: readonly SealingKey[]): string {
  const [version, id, iv, tag, body, ...rest] = box.split(".");
  if (version !== VERSION || !id || !iv || !tag || body === undefined || rest.length > 0) {
    throw new SecretBoxError("not a sealed secret");
  }
  const found = keys.find((k) => k.id === id);
  if (!found) throw new SecretBoxError("sealed with an encryption key that is no longer listed");
  try {
    const decipher = createDecipheriv("aes-256-gcm", found.key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(`${VERSION}.${id}`));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const text = Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]);
    return text.toString("utf8");
  } catch {
    throw new SecretBoxError("the sealed secret does not authenticate (altered, or a wrong key)");
  }
}

/** The box sealed again with the first key (unchanged when it already is). */
export function reseal(box: string, keys: readonly SealingKey[]): string {
  const [, id] = box.split(".");
  return id === keys[0]?.id ? box : seal(open(box, keys), keys);
}

/** What may be shown of a secret: its last 4 characters. */
export const lastFour = (secret: string): string => `…${secret.slice(-4)}`;
