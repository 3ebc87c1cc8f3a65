/**
 * Workspace keys at rest: sealed with AES-256-GCM, opened with any listed key, refused when
 * altered or sealed with a key no longer listed, and resealed with the first key on rotation.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  lastFour,
  open,
  reseal,
  seal,
  sealingKeys,
  SecretBoxError,
} from "../../src/util/secret-box.ts";

const b64 = () => randomBytes(32).toString("base64");

describe("sealed secrets", () => {
  it("opens what it sealed, whatever the text", () => {
    const keys = sealingKeys([b64()]);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (text) => {
        const box = seal(text, keys);
        expect(box).not.toContain(text.length > 3 ? text : "\u0000");
        expect(open(box, keys)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a box whose any part was altered", () => {
    const keys = sealingKeys([b64()]);
    const box = seal("he-workspaceKey0123456789", keys);
    const parts = box.split(".");
    for (let i = 2; i < parts.length; i++) {
      const altered = [...parts];
      const p = altered[i] ?? "";
      altered[i] = `${p.slice(0, -2)}${p.endsWith("AA") ? "BB" : "AA"}`;
      expect(() => open(altered.join("."), keys)).toThrow(SecretBoxError);
    }
  });

  it("rotates: the first key seals, older keys still open, reseal moves a box to the first", () => {
    const old = b64();
    const current = b64();
    const before = seal("he-oldKey", sealingKeys([old]));
    const rotated = sealingKeys([current, old]);
    expect(open(before, rotated)).toBe("he-oldKey");
    const after = reseal(before, rotated);
    expect(after).not.toBe(before);
    expect(open(after, sealingKeys([current]))).toBe("he-oldKey");
    expect(reseal(after, rotated)).toBe(after);
  });

  it("says so when a box was sealed with a key no longer listed", () => {
    const box = seal("he-gone", sealingKeys([b64()]));
    expect(() => open(box, sealingKeys([b64()]))).toThrow("no longer listed");
  });

  it("takes only 32-byte base64 keys, and shows only the last 4 characters of a secret", () => {
    expect(() => sealingKeys([randomBytes(16).toString("base64")])).toThrow("not 32 bytes");
    expect(() => sealingKeys(["not base64!"])).toThrow("not 32 bytes");
    expect(() => sealingKeys([])).toThrow("no encryption key");
    expect(lastFour("he-abcdefgh1234")).toBe("…1234");
  });
});
