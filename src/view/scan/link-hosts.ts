/** A link whose label looks like an address of another host (`[https://sso.corp](https://evil)`)
 * keeps its label, then the host it really goes to (docs/usage.md says why). Labels are read
 * without markers, escapes, character references and invisible characters; hosts as a URL
 * parser reads them (`https://sso.corp@evil` is `evil`), lower case, IDN as punycode, without
 * `www.` or a final dot. */
import { advanceFence, type FenceState, nextFenceLine } from "../markdown-scan.ts";
import { codeSpans } from "./inline-scan.ts";

/** What a label shows when its target's host cannot be read plainly. */
export const UNVERIFIED = "unverified link";

/** How much of a target is read for its host (a scheme, user info and a host). */
const TARGET_HEAD = 2048;

/** The host `target` goes to, when `label` looks like an address of another host and does not
 * already say so. */
export function misleadingHost(label: string, target: string): string | undefined {
  const claimed = claimedHost(label);
  if (claimed === undefined) return undefined;
  const real = targetHost(target);
  if (real === null) return undefined; // not a web link
  const shown = real?.host ?? UNVERIFIED;
  const same = bare(claimed.host) === bare(real?.hostname.replace(MARKERS, "") ?? "");
  if (real !== undefined && !claimed.reversible && same) return undefined;
  const told = label.trimEnd().endsWith(")") && plainLabel(label).trimEnd().endsWith(`(${shown})`);
  return told ? undefined : shown;
}

const bare = (host: string): string => host.replace(/\.$/, "").replace(/^www\./, "");

/** Numeric character references (`&#46;`, `&#x2e;`), which Markdown renderers decode. */
const CHAR_REF = /&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));/g;
const decodeRefs = (s: string): string =>
  s.includes("&#")
    ? s.replace(CHAR_REF, (m, hex?: string, dec?: string) => {
        const code = hex === undefined ? Number(dec) : Number.parseInt(hex, 16);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
      })
    : s;

/** Characters that show nothing (or turn the text around) and would split or hide a name. */
const INVISIBLE = /[\u00AD\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;
/** Those that reorder what is shown: a label holding one may show a host it does not name. */
const REORDERING = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
/** Dots as IDNA reads them (ideographic and full-width), and the one-dot leader that looks it. */
const DOTS = /[\u2024\u3002\uFF0E\uFF61]/g;

const NOT_PLAIN =
  /[&\\\u00AD\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u2024\u3002\uFF0E\uFF61]/;

/** A label as it reads: character references decoded, escapes and invisible characters out. */
const plainLabel = (label: string): string =>
  NOT_PLAIN.test(label)
    ? decodeRefs(label)
        .replace(/\\([!-/:-@[-`{-~])/g, "$1")
        .replace(INVISIBLE, "")
        .replace(DOTS, ".")
    : label;

/** What may wrap an address in a label (emphasis, code, quotes, brackets) or end a sentence. */
const WRAP = new Set([..." \t\r\n*_~`<>\"'()[]{}!,;", "\u00A0"]);

/** What every address holds: a dot (or what reads or decodes as one) or ":". */
const MAY_CLAIM = /[.:\u2024\u3002\uFF0E\uFF61]|&#/;
const SCHEME = /^[a-z][a-z0-9+.-]{0,31}:\/\//i;
/** Where a label's host ends ("sso.corp[1]" reads as sso.corp). */
const HOST_END = /[/?#:@\\\s[\](){}<>"',;!|]/;
/** Emphasis and code markers, which show nothing of themselves ("**sso**.corp" reads as sso.corp). */
const MARKERS = /[*_~`]/g;
const LABEL_PART = /^[\p{L}\p{N}\p{M}_-]+$/u;

/** The host a label claims, or undefined; `reversible`: it holds characters that reorder it. */
function claimedHost(label: string): { host: string; reversible: boolean } | undefined {
  if (!MAY_CLAIM.test(label)) return undefined;
  const text = plainLabel(label);
  let start = 0;
  let end = text.length;
  while (start < end && WRAP.has(text[start] ?? "")) start++;
  while (end > start && WRAP.has(text[end - 1] ?? "")) end--;
  if (end - start < 3) return undefined;
  const word = text.slice(start, end).replace(MARKERS, "");
  const scheme = SCHEME.exec(word)?.[0] ?? (word.startsWith("//") ? "//" : "");
  if (scheme === "" && /\s/.test(word)) return undefined; // ordinary text
  const rest = word.slice(scheme.length);
  const stop = rest.search(HOST_END);
  const host = (stop < 0 ? rest : rest.slice(0, stop)).toLowerCase();
  if (host === "" || (scheme === "" && !hostName(host))) return undefined;
  return { host: asciiHost(host), reversible: REORDERING.test(label) };
}

/** A dotted host name whose last label starts with a letter, or an IPv4 address. */
function hostName(host: string): boolean {
  const parts = host.replace(/\.$/, "").split(".");
  if (parts.length < 2 || !parts.every((p) => LABEL_PART.test(p))) return false;
  const last = parts.at(-1) ?? "";
  return /^\p{L}/u.test(last) || (parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p)));
}

function asciiHost(host: string): string {
  if (DNS_NAME.test(host)) return host;
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return host;
  }
}

const WEB = /^<?(https?:)\/\//i;
const AUTHORITY_END = /[/?#\\\s)<>]/;

/** The host an http(s) target goes to, as a URL parser reads it; undefined when it cannot be read
 * plainly (character references, unparsable, too long), null when it is no web link. */
function targetHost(target: string): { host: string; hostname: string } | undefined | null {
  const web = WEB.exec(target);
  if (!web) return null;
  const from = web[0].length;
  const head = target.slice(from, TARGET_HEAD);
  const stop = head.search(AUTHORITY_END);
  if (stop < 0 && target.length > TARGET_HEAD) return undefined; // too long to be a host
  const written = stop < 0 ? head : head.slice(0, stop);
  // A character reference in the host, or one that starts at its end ("&#64;" reads "@"),
  // may or may not be decoded by whoever renders the link: such a host is not read.
  const near = head.slice(0, written.length + 1);
  if (written === "" || near.includes("&#")) return undefined;
  if (DNS_NAME.test(written)) {
    const name = written.toLowerCase();
    return { host: name, hostname: name };
  }
  try {
    const url = new URL(`${web[1] ?? "https:"}//${written}/`);
    return { host: url.host, hostname: url.hostname };
  } catch {
    return undefined;
  }
}

/** A name the URL parser gives back as it is, in lower case (a numeric last label is IPv4). */
const DNS_NAME = /^(?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*\.?$/i;

/** A host as Markdown text: its ASCII punctuation escaped (a host may hold `_`, `*`, `[`). */
const markdownText = (host: string): string => host.replace(/[!-,/;-@[-`{-~]/g, "\\$&");

/** The longest label holding brackets that is read (`[sso.corp[1]](…)`), to stay linear. */
const NESTED_LABEL = 64;

/** Where a label ends and a web link's target starts (`](h`, `](<h`): text without is left be. */
const WEB_LINK = /\]\(<?h/i;

const MARKS = /[[\]`]/g;
const NEAR = 8; // how far the next mark is looked for a character at a time

/** `[sso.corp](https://evil.example)` → `[sso.corp (evil.example)](https://evil.example)`, code
 * left as written. One pass; brackets pair on one stack. */
export function revealLinkHosts(markdown: string): string {
  if (!WEB_LINK.test(markdown)) return markdown;
  const scan = new LinkScan(markdown);
  scan.run();
  return scan.result();
}

class LinkScan {
  readonly #text: string;
  readonly #inserts: [at: number, text: string][] = [];
  /** The "[" not closed yet, and whether each holds a bracket. */
  readonly #opens: number[] = [];
  readonly #holds: boolean[] = [];
  #nextMark = -1;

  constructor(text: string) {
    this.#text = text;
  }

  run(): void {
    const text = this.#text;
    const fence: FenceState = { open: undefined, info: "" };
    let fenceLine = nextFenceLine(text, 0);
    for (let start = 0; start < text.length;) {
      const nl = text.indexOf("\n", start);
      const end = nl < 0 ? text.length : nl;
      if (fenceLine < start) fenceLine = nextFenceLine(text, start);
      const inCode = fence.open !== undefined;
      if (fenceLine === start) advanceFence(fence, text, start, end);
      if (!inCode && fence.open === undefined) this.#line(start, end);
      else this.#opens.length = this.#holds.length = 0; // no link spans a code block
      start = end + 1;
      if (fence.open !== undefined && start < text.length) {
        // Inside a code block only a fence line matters.
        fenceLine = nextFenceLine(text, start);
        start = Math.max(start, text.lastIndexOf("\n", fenceLine - 1) + 1);
      }
    }
  }

  /** One line outside code blocks: its brackets, past its code spans. */
  #line(start: number, end: number): void {
    const text = this.#text;
    if (this.#nextMark < start) this.#nextMark = this.#markFrom(start);
    let spans: ReturnType<typeof codeSpans> | undefined;
    for (let i = this.#nextMark; i < end; i = this.#nextMark) {
      const c = text.charCodeAt(i);
      if (c === 96) {
        let j = i + 1;
        while (text.charCodeAt(j) === 96) j++;
        spans ??= codeSpans(text.slice(start, end));
        const close = spans.closes?.[i - start] ?? 0;
        this.#nextMark = this.#markFrom(close > 0 ? start + close + (j - i) : j);
        continue;
      }
      this.#nextMark = this.#markFrom(i + 1);
      if (c === 91) {
        this.#hold();
        this.#opens.push(i);
        this.#holds.push(false);
      } else {
        const open = this.#opens.pop();
        const holds = this.#holds.pop();
        if (open === undefined) continue;
        this.#hold();
        const short = !holds || i - open <= NESTED_LABEL;
        if (short && text.charCodeAt(i + 1) === 40) this.#link(open, i);
      }
    }
  }

  /** The first mark from `from`: looked at in the next few characters, searched for beyond. */
  #markFrom(from: number): number {
    const text = this.#text;
    const near = Math.min(from + NEAR, text.length);
    for (let i = from; i < near; i++) {
      const c = text.charCodeAt(i);
      if (c === 91 || c === 93 || c === 96) return i;
    }
    MARKS.lastIndex = near;
    return MARKS.exec(text)?.index ?? text.length;
  }

  #hold(): void {
    if (this.#holds.length > 0) this.#holds[this.#holds.length - 1] = true;
  }

  #link(open: number, close: number): void {
    const text = this.#text;
    // No address is shorter than "a.b", and only a web link's target is read ("h", or "<h").
    const first = text.charCodeAt(close + 2) | 0x20;
    if (close - open <= 3 || (first !== 104 && first !== 60) /* < */) return;
    const target = text.slice(close + 2, close + 2 + TARGET_HEAD + 1);
    const host = misleadingHost(text.slice(open + 1, close), target);
    if (host !== undefined) this.#inserts.push([close, ` (${markdownText(host)})`]);
  }

  result(): string {
    if (this.#inserts.length === 0) return this.#text;
    let out = "";
    let from = 0;
    for (const [at, add] of this.#inserts) {
      out += this.#text.slice(from, at) + add;
      from = at;
    }
    return out + this.#text.slice(from);
  }
}
