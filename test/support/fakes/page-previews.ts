/**
 * PagePreviews for unit tests: no browser. Each page among the files (the same choice as the
 * real one makes) gets one "image" whose bytes name the page and the files it could load.
 */
import type { PagePreviews, SiteFile, UploadItem } from "../../../src/runs/ports.ts";
import { pagesOf, previewNames, siteOf } from "../../../src/preview/site.ts";

export class FakePagePreviews implements PagePreviews {
  /** The files each call was given. */
  readonly calls: SiteFile[][] = [];
  readonly #maxPages: number;

  constructor(maxPages = 3) {
    this.#maxPages = maxPages;
  }

  async render(files: readonly SiteFile[]): Promise<UploadItem[]> {
    this.calls.push([...files]);
    const site = siteOf(files);
    return pagesOf(site, this.#maxPages).map((page) => ({
      filename: previewNames(page).viewport,
      bytes: Buffer.from(`preview of ${page.path} with ${[...site.files.keys()].join(",")}`),
      title: `Preview of ${page.path}`,
    }));
  }
}
