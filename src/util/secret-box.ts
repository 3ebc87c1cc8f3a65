/**
 * Secrets at rest (a workspace's service API key, installations' Slack tokens): AES-256-GCM from
 * `node:crypto`, with key rotation. Several keys may be listed; the first encrypts, any listed
 * key decrypts, and a box names the key that sealed it (by a short fingerprint, never the key),
 * so re-encrypting with the first key is a read and a write.
 *
 * Every box is bound to where it is kept: the caller names the record and the field (e.g.
 * `t:T123:service-key`), and that name is authenticated with the box (GCM's additional data),
 * so a box copied into another workspace's record, or from a bot token into a user token, does
 * not open. Boxes of the first format (`v1`, bound to nothing) still open, wherever they are,
 * until `npm run keys:reseal` (or the next save) seals them again in the bound format (`v2`).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/** Bound to its record (the additional data names it); what `seal` writes. */
const VERSION = "v2";
/** Bound to nothing: written before boxes were bound; still opened, resealed as `v2`. */
const UNBOUND = "v1";
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

/** The additional data: the format, the key's id and, from `v2`, the record the box is bound to. */
const additionalData = (version: string, id: string, binding: string): Buffer =>
  Buffer.from(version === UNBOUND ? `${version}.${id}` : `${version}.${id}.${binding}`);

/**
 * `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts); the key id and `binding` (where the
 * box is kept: a record's key and field, never a secret) are authenticated too.
 */
export function seal(plaintext: string, keys: readonly SealingKey[], binding: string): string {
  const [first] = keys;
  if (!first) throw new SecretBoxError("no encryption key is set");
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", first.key, iv);
  cipher.setAAD(additionalData(VERSION, first.id, binding));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
  return [VERSION, first.id, ...parts].join(".");
}

/** Whether a stored value is a box (a Slack token or an API key never has this shape). */
export const isSealed = (value: string): boolean => /^v[12]\.[0-9a-f]{8}\./.test(value);

/**
 * The sealed text, when the box was sealed for `binding` (or is an unbound `v1` box). Throws
 * SecretBoxError when its key is not listed, it was tampered with, or it belongs elsewhere.
 */
export function open(box: string, keys: readonly SealingKey[], binding: string): string {
  const [version, id, iv, tag, body, ...rest] = box.split(".");
  const known = version === VERSION || version === UNBOUND;
  if (!known || !id || !iv || !tag || body === undefined || rest.length > 0) {
    throw new SecretBoxError("not a sealed secret");
  }
  const found = keys.find((k) => k.id === id);
  if (!found) throw new SecretBoxError("sealed with an encryption key that is no longer listed");
  try {
    const decipher = createDecipheriv("aes-256-gcm", found.key, Buffer.from(iv, "base64url"));
    decipher.setAAD(additionalData(version, id, binding));
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

/** The box sealed again with the first key, bound (unchanged when it already is). */
export function reseal(box: string, keys: readonly SealingKey[], binding: string): string {
  if (isCurrent(box, keys)) {
    open(box, keys, binding); // one bound elsewhere is not passed on as current
    return box;
  }
  return seal(open(box, keys, binding), keys, binding);
}

/** What may be shown of a secret: its last 4 characters. */
export const lastFour = (secret: string): string => `…${secret.slice(-4)}`;
