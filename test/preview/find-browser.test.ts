import { describe, expect, it } from "vitest";
import { findBrowser } from "../../src/preview/find-browser.ts";
import { sandboxAllowed } from "../../src/preview/index.ts";

describe("finding the browser", () => {
  const only = (paths: string[]) => (p: string) => paths.includes(p);

  it("takes CHROMIUM_PATH when it is an executable, and says so when it is not", () => {
    expect(findBrowser("/opt/c/chrome", ["/usr/bin"], only(["/opt/c/chrome"]))).toEqual({
      path: "/opt/c/chrome",
    });
    expect(findBrowser("/opt/c/chrome", ["/usr/bin"], only(["/usr/bin/chromium"]))).toEqual({
      missing: "CHROMIUM_PATH (/opt/c/chrome) is not an executable file",
    });
  });

  it("looks for chromium, chromium-browser and google-chrome along PATH, in order", () => {
    const found = findBrowser(undefined, ["/a", "/b"], only(["/b/chromium", "/a/google-chrome"]));
    expect(found).toEqual({ path: "/a/google-chrome" });
    expect(findBrowser(undefined, ["/a"], only([]))).toMatchObject({
      missing: expect.stringMatching(/set CHROMIUM_PATH/),
    });
  });

  it("keeps Chromium's sandbox on unless running as root", () => {
    expect(sandboxAllowed(1000)).toBe(true);
    expect(sandboxAllowed(undefined)).toBe(true);
    expect(sandboxAllowed(0)).toBe(false);
  });
});
