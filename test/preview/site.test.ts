import { describe, expect, it } from "vitest";
import {
  fileFor,
  pagesOf,
  pageUrl,
  previewNames,
  previewTitle,
  siteOf,
  SITE_ORIGIN,
} from "../../src/preview/site.ts";

const file = (path: string, type?: string) => ({
  path,
  read: async () => Buffer.from(path),
  type,
});

describe("a run's files as a site", () => {
  const site = siteOf([
    file("/workspace/out/about.html"),
    file("/workspace/out/index.html", "text/html"),
    file("/workspace/out/style.css", "text/css"),
    file("/workspace/out/img/logo.png", "image/png"),
    file("notes.txt"),
    file("/workspace/out/app.xhtml"),
  ]);
  const index = site.files.get("/workspace/out/index.html");
  if (!index) throw new Error("no index");

  it("shows index pages first, then the others in the run's order, at most N", () => {
    expect(pagesOf(site, 5).map((p) => p.path)).toEqual([
      "/workspace/out/index.html",
      "/workspace/out/about.html",
      "/workspace/out/app.xhtml",
    ]);
    expect(pagesOf(site, 1)).toHaveLength(1);
  });

  it("serves a page's relative, absolute and root-relative requests from the run's files", () => {
    const url = (p: string) => new URL(p, pageUrl(index)).href;
    expect(fileFor(site, index, url("style.css"))?.path).toBe("/workspace/out/style.css");
    expect(fileFor(site, index, url("./img/logo.png"))?.path).toBe("/workspace/out/img/logo.png");
    expect(fileFor(site, index, url("/style.css"))?.path).toBe("/workspace/out/style.css");
    expect(fileFor(site, index, url("/workspace/out/img/logo.png"))?.type).toBe("image/png");
  });

  it("refuses every other origin, unknown paths and paths climbing out of the site", () => {
    expect(fileFor(site, index, "http://127.0.0.1:9/style.css")).toBeUndefined();
    expect(fileFor(site, index, "https://site.preview.invalid/style.css")).toBeUndefined();
    expect(fileFor(site, index, "data:text/css,body{}")).toBeUndefined();
    expect(fileFor(site, index, `${SITE_ORIGIN}/missing.css`)).toBeUndefined();
    expect(fileFor(site, index, `${SITE_ORIGIN}/%E0%A4%A`)).toBeUndefined();
    expect(fileFor(site, index, `${SITE_ORIGIN}/../../etc/passwd`)).toBeUndefined();
    expect(fileFor(site, index, "not a url")).toBeUndefined();
  });

  it("names the images after the page and titles them after its <title>, on one short line", () => {
    expect(previewNames(index)).toEqual({
      viewport: "index-preview.png",
      full: "index-full-page.png",
    });
    expect(previewTitle("  Bakery\n\u0000 home ", index)).toBe("Bakery home");
    expect(previewTitle("", index)).toBe("index.html");
    expect(previewTitle("x".repeat(500), index)).toHaveLength(100);
    // Cut where an emoji would be split: the whole emoji goes, no lone half is shown.
    expect(previewTitle(`${"x".repeat(98)}🎉 party`, index)).toBe(`${"x".repeat(98)}…`);
  });
});
