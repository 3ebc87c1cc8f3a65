import { describe, expect, it } from "vitest";
import { retryAfterFromHeaders, TaskServiceError } from "../../src/service/errors.ts";
import { validateTaskInput } from "../../src/service/limits.ts";

const MB = 1024 * 1024;

function refusal(fn: () => void): TaskServiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TaskServiceError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("client-side limits", () => {
  it("accepts a prompt of exactly 5,000 characters, counting emoji as one", () => {
    expect(() => validateTaskInput("🚀".repeat(5000), [])).not.toThrow();
  });

  it("refuses a prompt of 5,001 characters and says how long it was", () => {
    const err = refusal(() => validateTaskInput("x".repeat(5001), []));
    expect(err.kind).toBe("input");
    expect(err.limit).toBe("prompt_length");
    expect(err.message).toContain("5,001");
    expect(err.message).toContain("5,000");
  });

  it("requires a prompt when there are no files, but not with files", () => {
    expect(refusal(() => validateTaskInput("   ", [])).limit).toBe("prompt_required");
    expect(() => validateTaskInput(undefined, [{ name: "a.png", size: 10 }])).not.toThrow();
  });

  it("refuses more than 10 files", () => {
    const files = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.txt`, size: 1 }));
    expect(refusal(() => validateTaskInput("p", files)).limit).toBe("file_count");
  });

  it("refuses a file over 50 MB and names it", () => {
    const err = refusal(() => validateTaskInput("p", [{ name: "big.zip", size: 50 * MB + 1 }]));
    expect(err.limit).toBe("file_size");
    expect(err.message).toContain("big.zip");
  });

  it("refuses more than 200 MB in total", () => {
    const files = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}.zip`, size: 45 * MB }));
    expect(refusal(() => validateTaskInput("p", files)).limit).toBe("total_size");
  });

  it("refuses extensions outside the allow-list, case-insensitively accepting allowed ones", () => {
    expect(refusal(() => validateTaskInput("p", [{ name: "run.exe", size: 1 }])).limit).toBe(
      "file_type",
    );
    expect(refusal(() => validateTaskInput("p", [{ name: "noext", size: 1 }])).limit).toBe(
      "file_type",
    );
    expect(() => validateTaskInput("p", [{ name: "PHOTO.JPG", size: 1 }])).not.toThrow();
  });
});

describe("retry information", () => {
  it("reads Retry-After in seconds and as a date, then X-RateLimit-Reset", () => {
    const now = 1_700_000_000_000;
    expect(retryAfterFromHeaders({ "retry-after": "7" }, now)).toBe(7000);
    expect(retryAfterFromHeaders({ "retry-after": new Date(now + 3000).toUTCString() }, now)).toBe(
      3000,
    );
    expect(retryAfterFromHeaders({ "x-ratelimit-reset": String(now / 1000 + 12) }, now)).toBe(
      12_000,
    );
    expect(retryAfterFromHeaders({ "x-ratelimit-reset": "5" }, now)).toBe(5000);
    expect(retryAfterFromHeaders({}, now)).toBeUndefined();
  });
});
