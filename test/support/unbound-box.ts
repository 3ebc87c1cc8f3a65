/**
 * A box as the secret box's first format sealed it (`v1`, bound to no record), as stores written
 * before boxes were bound hold them: built with `node:crypto` directly, the way that format did.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";

/** `text` sealed with `b64key` in the first format. */
export function unboundBox(text: string, b64key: string): string {
  const key = Buffer.from(b64key, "base64");
  const id = createHash("sha256").update(key).digest("hex").slice(0, 8);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(`v1.${id}`));
  const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return ["v1", id, ...[iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"))].join(
    ".",
  );
}
