/**
 * Secrets at rest (a workspace's service API key, installations' Slack tokens): AES-256-GCM from
 * `node:crypto`, with key rotation. Several keys may be listed; the first encrypts, any listed
 * key decrypts, and a box names the key that sealed it (by a short fingerprint, never the key),
 * so re-encrypting with the first key is a read and a write.
 *
 * Every box is bound to where it is kept: the caller names the record and the field (e.g.
 * `t:T123:service-key`), and that name is authenticated with the box (GCM's additional data),
 * so a box copied into another workspace's record, or from a bot token into a user token, does
 * not open. A box starts with its format's version (`v2`), so that a later format can tell the
 * boxes it must migrate; this version opens its own format only: a plain value, or a box of any
 * other format (the unbound `v1` of the app's development), is refused, never used.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/** The format: bound to its record (the additional data names it). The only one `open` reads. */
const VERSION = "v2";
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

/** What `open` says of a value that is not a box of this format (never the value). */
export const NOT_SEALED = "not sealed in this app's format";
/** What `open` says of a box sealed with a key no longer in the list. */
export const KEY_NOT_LISTED = "sealed with an encryption key that is no longer listed";

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

/** The additional data: the format, the key's id and the record the box is bound to. */
const additionalData = (id: string, binding: string): Buffer =>
  Buffer.from(`${VERSION}.${id}.${binding}`);

/**
 * `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts); the key id and `binding` (where the
 * box is kept: a record's key and field, never a secret) are authenticated too.
 */
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

/**
 * The sealed text, when the box was sealed for `binding`. Throws SecretBoxError (whose message
 * never holds the value) when it is not a box of this format (a plain value, an older format),
 * its key is not listed, it was tampered with, or it belongs elsewhere.
 */
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

/** Whether the box is already sealed with the first key, bound to its record. */
export const isCurrent = (box: string, keys: readonly SealingKey[]): boolean =>
  box.startsWith(`${VERSION}.${keys[0]?.id ?? "-"}.`);

/**
 * The box sealed again with the first key (unchanged when it already is); throws like `open`
 * when it does not open.
 */
export function reseal(box: string, keys: readonly SealingKey[], binding: string): string {
  if (isCurrent(box, keys)) {
    open(box, keys, binding); // one bound elsewhere is not passed on as current
    return box;
  }
  return seal(open(box, keys, binding), keys, binding);
}

/** What may be shown of a secret: its last 4 characters. */
export const lastFour = (secret: string): string => `…${secret.slice(-4)}`;
