/**
 * Secrets at rest: AES-256-GCM (`node:crypto`); the first listed key encrypts, any listed key
 * decrypts (a box names its key by fingerprint). A box is bound to where it is kept (GCM's
 * additional data), so a copy in another record does not open; another format, or a plain
 * value, is refused.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = "v2";
const KEY_BYTES = 32;
const IV_BYTES = 12;

export interface SealingKey {
  readonly id: string; // the first 8 hex digits of the key's SHA-256
  readonly key: Buffer;
}

export class SecretBoxError extends Error {
  override readonly name = "SecretBoxError";
}

export const NOT_SEALED = "not sealed in this app's format";
export const KEY_NOT_LISTED = "sealed with an encryption key that is no longer listed";

/** 32 bytes of base64 each; the first one encrypts. */
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

const additionalData = (id: string, binding: string): Buffer =>
  Buffer.from(`${VERSION}.${id}.${binding}`);

/** `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url); the key id and `binding` authenticated. */
export function seal(plaintext: string, keys: readonly SealingKey[], binding: string): string {
  const [first] = keys;
  if (!first) throw new SecretBoxError("no encryption key is set");
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", first.key, iv);
  cipher.setAAD(additionalData(first.id, binding));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
  return [VERSION, first.id, ...parts].join(".");
}

/** Throws a SecretBoxError (never holding the value) when the box does not open. */
export function open(box: string, keys: readonly SealingKey[], binding: string): string {
  const [version, id, iv, tag, body, ...rest] = box.split(".");
  if (version !== VERSION || !id || !iv || !tag || body === undefined || rest.length > 0) {
    throw new SecretBoxError(NOT_SEALED);
  }
  const found = keys.find((k) => k.id === id);
  if (!found) throw new SecretBoxError(KEY_NOT_LISTED);
  try {
    const decipher = createDecipheriv("aes-256-gcm", found.key, Buffer.from(iv, "base64url"));
    decipher.setAAD(additionalData(id, binding));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const text = Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]);
    return text.toString("utf8");
  } catch {
    throw new SecretBoxError(
      "the sealed secret does not authenticate (altered, a wrong key, or another record's)",
    );
  }
}

const isCurrent = (box: string, keys: readonly SealingKey[]): boolean =>
  box.startsWith(`${VERSION}.${keys[0]?.id ?? "-"}.`);

/** Unchanged when sealed with the first key already; throws like `open`. */
export function reseal(box: string, keys: readonly SealingKey[], binding: string): string {
  if (isCurrent(box, keys)) {
    open(box, keys, binding); // one bound elsewhere is not passed on as current
    return box;
  }
  return seal(open(box, keys, binding), keys, binding);
}

/** All that may be shown of a secret. */
export const lastFour = (secret: string): string => `…${secret.slice(-4)}`;
