/**
 * Links whose label looks like an address of another host. A label is the author's to write:
 * `[https://sso.corp](https://evil.example)` shows "https://sso.corp" and opens evil.example,
 * and an answer is hostile input (a prompt injected into what the agent read can write it).
 * Such a link keeps its label, followed inside it by the host it really goes to:
 * "https://sso.corp (evil.example)", as the glitch-soc Mastodon web client tags a link whose
 * text is a URL of another host ("[host]" after the text, its "tag misleading links" setting).
 * The real host is where the eye reads the link, on every surface and without hovering
 * (Slack's mobile apps have no hover), and a label that is only a file or product name
 * ("index.html", "Node.js") still reads as written. Showing the target instead of the label
 * would hide that name, and a warning would be one more thing to read past.
 *
 * A label looks like an address when, with its Markdown markers, escapes, numeric character
 * references and invisible characters taken out, it starts with a scheme (`https://…`) or is
 * one word whose start is a host name (`sso.corp`, `www.bank.com/login`, `10.0.0.1:8080`).
 * Its host is compared with the target's as a URL parser reads it (`https://sso.corp@evil`
 * goes to `evil`), in lower case, IDN as punycode, without a leading `www.` or a final dot.
 * Links whose label is ordinary text, or names the target's own host, are left as they are,
 * as are targets other than http(s) (mailto: opens a mail program, not a page).
 */
import { advanceFence, type FenceState, nextFenceLine } from "../markdown-scan.ts";
import { codeSpans } from "./inline-scan.ts";

/** What a label shows when its target's host cannot be read plainly. */
export const UNVERIFIED = "unverified link";

/** How much of a target is read for its host: a scheme, user info and a host fit in it. */
const TARGET_HEAD = 2048;

/**
 * The host `target` really goes to, to show after `label`, when the label looks like an address
 * of another host; undefined when it is ordinary text or names the target's own host (or says
 * so already: a label shown once is not tagged twice).
 */
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

/** A host name as compared: without a leading "www." or a final dot. */
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

/** What plainLabel changes: most labels have none of it, and are read as they are. */
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

/** What every address holds: a dot (or what reads as one, or may be decoded into one) or ":". */
const MAY_CLAIM = /[.:\u2024\u3002\uFF0E\uFF61]|&#/;
const SCHEME = /^[a-z][a-z0-9+.-]{0,31}:\/\//i;
/**
 * Where a label's host ends: a path, query, fragment, port, user info's "@", a blank, or
 * punctuation no host name holds ("sso.corp[1]" reads as sso.corp).
 */
const HOST_END = /[/?#:@\\\s[\](){}<>"',;!|]/;
/** Emphasis and code markers, which show nothing of themselves ("**sso**.corp" reads as sso.corp). */
const MARKERS = /[*_~`]/g;
const LABEL_PART = /^[\p{L}\p{N}\p{M}_-]+$/u;

/**
 * The host a label claims, lower case (punycode for IDN), or undefined when it does not look
 * like an address; `reversible` when it holds characters that reorder what it shows.
 */
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

/** A host name as a URL parser gives it (IDN as punycode), or as written if it gives none. */
function asciiHost(host: string): string {
  if (DNS_NAME.test(host)) return host;
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return host;
  }
}

const WEB = /^<?(https?:)\/\//i;
/** Where a target's authority ends (a path, query or fragment, a blank, or the link's end). */
const AUTHORITY_END = /[/?#\\\s)<>]/;

/**
 * The host an http(s) target goes to, as a URL parser reads its authority; undefined when it
 * cannot be read plainly (written with character references that a renderer may or may not
 * decode, unparsable, or too long), null when the target is not a web link.
 */
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
  // A plain name reads as itself (lower case); anything else as the URL parser reads it.
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

/**
 * A name the URL parser gives back as it is, in lower case: ASCII labels of letters, digits and
 * hyphens, the last starting with a letter (a numeric one is read as an IPv4 address), no port.
 */
const DNS_NAME = /^(?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*\.?$/i;

/** A host as Markdown text: its ASCII punctuation escaped (a host may hold `_`, `*`, `[`). */
const markdownText = (host: string): string => host.replace(/[!-,/;-@[-`{-~]/g, "\\$&");

/**
 * The longest label holding brackets that is read (`[sso.corp[1]](…)`): each character is
 * then read for at most this many labels.
 */
const NESTED_LABEL = 64;

/** Where a label ends and a web link's target starts (`](h`, `](<h`): text without is left be. */
const WEB_LINK = /\]\(<?h/i;

/** "[", "]" and backticks: what a link's label and a code span are read from. */
const MARKS = /[[\]`]/g;
/** How far the next mark is looked for a character at a time. */
const NEAR = 8;

/**
 * Markdown (an answer, for Slack's `markdown` block) with the real host shown inside the label
 * of every link whose label looks like an address of another host:
 * `[sso.corp](https://evil.example)` → `[sso.corp (evil.example)](https://evil.example)`.
 * Fenced code blocks and a line's code spans are left as written. One pass: each line is read
 * once (a code block's lines are skipped to its next fence line), brackets pair on one stack,
 * and a label holding brackets is read only up to NESTED_LABEL characters long.
 */
export function revealLinkHosts(markdown: string): string {
  if (!WEB_LINK.test(markdown)) return markdown;
  const scan = new LinkScan(markdown);
  scan.run();
  return scan.result();
}

class LinkScan {
  readonly #text: string;
  /** Where each label gets its host, in order, and what. */
  readonly #inserts: [at: number, text: string][] = [];
  /** The "[" not closed yet, and whether each holds a bracket. */
  readonly #opens: number[] = [];
  readonly #holds: boolean[] = [];
  /** The next "[", "]" or backtick to read (searched for once past the last one read). */
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
        // Inside a code block only a fence line matters: on to the next one's line.
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
        // A run of backticks: past its code span if a run as long closes it, else past it.
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
        // A label holding brackets is read only if short: no character is read for many.
        const short = !holds || i - open <= NESTED_LABEL;
        if (short && text.charCodeAt(i + 1) === 40) this.#link(open, i);
      }
    }
  }

  /** Where the first mark at or after `from` is (the text's length if none). */
  #markFrom(from: number): number {
    // Looked at in the next few characters (a page of marks), searched for beyond them.
    const text = this.#text;
    const near = Math.min(from + NEAR, text.length);
    for (let i = from; i < near; i++) {
      const c = text.charCodeAt(i);
      if (c === 91 || c === 93 || c === 96) return i;
    }
    MARKS.lastIndex = near;
    return MARKS.exec(text)?.index ?? text.length;
  }

  /** The innermost open "[" now holds a bracket. */
  #hold(): void {
    if (this.#holds.length > 0) this.#holds[this.#holds.length - 1] = true;
  }

  /** `[label](target…` with its label from `open` to `close`. */
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
