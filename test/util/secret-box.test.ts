/**
 * Secrets at rest: sealed with AES-256-GCM, opened with any listed key, refused when altered,
 * sealed with a key no longer listed, bound to another record, or not a box of the sealed
 * format (plain text, the unbound `v1` of development), and resealed with the first key on
 * rotation.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  lastFour,
  NOT_SEALED,
  open,
  reseal,
  seal,
  sealingKeys,
  SecretBoxError,
} from "../../src/util/secret-box.ts";

const b64 = () => randomBytes(32).toString("base64");
const AT = "t:T1:service-key";

describe("sealed secrets", () => {
  it("opens what it sealed, whatever the text", () => {
    const keys = sealingKeys([b64()]);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (text) => {
        const box = seal(text, keys, AT);
        expect(box).not.toContain(text.length > 3 ? text : "\u0000");
        expect(open(box, keys, AT)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a box whose any part was altered", () => {
    const keys = sealingKeys([b64()]);
    const box = seal("he-workspaceKey0123456789", keys, AT);
    const parts = box.split(".");
    for (let i = 2; i < parts.length; i++) {
      const altered = [...parts];
      const p = altered[i] ?? "";
      // Its first character changed: every bit of it counts (the last ones may carry only
      // padding bits, so changing those could leave the bytes as they were).
      altered[i] = `${p.startsWith("A") ? "B" : "A"}${p.slice(1)}`;
      expect(() => open(altered.join("."), keys, AT)).toThrow(SecretBoxError);
    }
  });

  it("rotates: the first key seals, older keys still open, reseal moves a box to the first", () => {
    const old = b64();
    const current = b64();
    const before = seal("he-oldKey", sealingKeys([old]), AT);
    const rotated = sealingKeys([current, old]);
    expect(open(before, rotated, AT)).toBe("he-oldKey");
    const after = reseal(before, rotated, AT);
    expect(after).not.toBe(before);
    expect(open(after, sealingKeys([current]), AT)).toBe("he-oldKey");
    expect(reseal(after, rotated, AT)).toBe(after);
  });

  it("says so when a box was sealed with a key no longer listed", () => {
    const box = seal("he-gone", sealingKeys([b64()]), AT);
    expect(() => open(box, sealingKeys([b64()]), AT)).toThrow("no longer listed");
  });

  it("opens a box only for the record it was sealed for: copied to another workspace's, it does not open", () => {
    const keys = sealingKeys([b64()]);
    const box = seal("xoxb-team-one-token", keys, "t:T1:installation#bot.token");
    expect(box.startsWith("v2.")).toBe(true); // its format's version, for a later one to migrate
    expect(open(box, keys, "t:T1:installation#bot.token")).toBe("xoxb-team-one-token");
    for (const elsewhere of [
      "t:T2:installation#bot.token",
      "t:T1:installation#user.token",
      "t:T1:service-key",
    ]) {
      expect(() => open(box, keys, elsewhere)).toThrow("another record's");
      expect(() => reseal(box, keys, elsewhere)).toThrow(SecretBoxError);
    }
  });

  it("refuses a plain value and a box of the unbound v1 format, opening and re-sealing alike", () => {
    const k = b64();
    const keys = sealingKeys([k]);
    // A v1 box as development once sealed it: valid AES-GCM under the same key, bound to nothing.
    const key = Buffer.from(k, "base64");
    const id = createHash("sha256").update(key).digest("hex").slice(0, 8);
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv);
    cipher.setAAD(Buffer.from(`v1.${id}`));
    const body = Buffer.concat([cipher.update("he-before-binding", "utf8"), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url"));
    const v1 = ["v1", id, ...parts].join(".");
    for (const value of [v1, "he-plain-key-1234", "xoxb-1-2-abc", "xoxe.xoxb-1-abc"]) {
      const refusal = (fn: () => unknown) => {
        try {
          fn();
        } catch (err) {
          return err;
        }
        return undefined;
      };
      for (const err of [
        refusal(() => open(value, keys, AT)),
        refusal(() => reseal(value, keys, AT)),
      ]) {
        expect(err).toBeInstanceOf(SecretBoxError);
        expect((err as Error).message).toBe(NOT_SEALED);
        expect((err as Error).message).not.toContain(value);
      }
    }
  });

  it("takes only 32-byte base64 keys, and shows only the last 4 characters of a secret", () => {
    expect(() => sealingKeys([randomBytes(16).toString("base64")])).toThrow("not 32 bytes");
    expect(() => sealingKeys(["not base64!"])).toThrow("not 32 bytes");
    expect(() => sealingKeys([])).toThrow("no encryption key");
    expect(lastFour("he-abcdefgh1234")).toBe("…1234");
  });
});
