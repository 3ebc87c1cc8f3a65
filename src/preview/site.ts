/** A run's files as the site its pages load from memory (pure). */
import { posix } from "node:path";
import type { SiteFile } from "../runs/ports.ts";
import { truncate } from "../view/sanitize.ts";

/** The origin the pages are loaded from: a reserved name (RFC 2606) no network can answer. */
export const SITE_ORIGIN = "http://site.preview.invalid";

const HTML_EXT = /\.x?html?$/i;
// eslint-disable-next-line no-control-regex -- control characters are what is removed
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const TITLE_MAX = 100;

/** By normalised path (a later one of the same path wins). */
export interface Site {
  readonly files: ReadonlyMap<string, SiteFile>;
}

/** `/workspace/out/index.html` from whatever path the service gave (never escaping `/`). */
export function sitePath(path: string): string {
  return posix.normalize(`/${path.replace(/\\/g, "/")}`);
}

export function siteOf(files: readonly SiteFile[]): Site {
  const map = new Map<string, SiteFile>();
  for (const f of files) map.set(sitePath(f.path), f);
  return { files: map };
}

function isPage(file: SiteFile): boolean {
  return (
    /^(text\/html|application\/xhtml\+xml)\b/i.test(file.type ?? "") || HTML_EXT.test(file.path)
  );
}

/** The pages to show, at most `max`: `index.html` ones first, then in the run's order. */
export function pagesOf(site: Site, max: number): SiteFile[] {
  const pages = [...site.files.values()].filter(isPage);
  const index = (f: SiteFile) => (/(^|\/)index\.x?html?$/i.test(f.path) ? 0 : 1);
  return pages
    .map((f, i) => ({ f, i }))
    .sort((a, b) => index(a.f) - index(b.f) || a.i - b.i)
    .slice(0, max)
    .map(({ f }) => f);
}

export function pageUrl(page: SiteFile): string {
  return `${SITE_ORIGIN}${encodeURI(sitePath(page.path))}`;
}

/** A request's file: its exact path, else under the page's folder (`/a.css` by `index.html`). */
export function fileFor(site: Site, page: SiteFile, url: string): SiteFile | undefined {
  const parsed = URL.parse(url);
  if (parsed?.origin !== SITE_ORIGIN) return undefined;
  let path: string;
  try {
    path = sitePath(decodeURIComponent(parsed.pathname));
  } catch {
    return undefined;
  }
  const exact = site.files.get(path);
  if (exact) return exact;
  const dir = posix.dirname(sitePath(page.path));
  return site.files.get(posix.join(dir, path));
}

/** The images' file names: `index-preview.png`, `index-full-page.png`. */
export function previewNames(page: SiteFile): { viewport: string; full: string } {
  const base =
    (sitePath(page.path).split("/").at(-1) ?? "page").replace(CONTROL, "").replace(HTML_EXT, "") ||
    "page";
  return { viewport: `${base}-preview.png`, full: `${base}-full-page.png` };
}

/** A page's <title> made safe to show as a file's title (one line, at most 100 characters). */
export function previewTitle(raw: string, page: SiteFile): string {
  const name = sitePath(page.path).split("/").at(-1) ?? "page";
  const title = raw.replace(CONTROL, " ").replace(/\s+/g, " ").trim();
  const chosen = title === "" ? name : title;
  return truncate(chosen, TITLE_MAX); // never between an emoji's halves
}
