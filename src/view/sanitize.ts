/** Model output must never ping anyone: Slack's special mentions (<!channel>, <!subteam^…>), user
 * and channel mentions (<@U…>, <#C…>) and bare @channel/@here/@everyone are broken with a
 * zero-width space, which Slack does not resolve. */
import { Buffer } from "node:buffer";

export const ZWSP = "\u200B";

export function neutralizeMentions(text: string): string {
  // Lookarounds and a replacement without groups: V8's fast path. A replacement costs about
  // 40 ns, so a long text full of "<" has them broken in one pass instead, after the words
  // (the two commute: neither looks at what the other inserts).
  if (manyOpeners(text)) return breakOpeners(mayHoldWords(text) ? breakWords(text) : text);
  return breakWords(text.replace(/<(?=[!@#])/g, `<${ZWSP}`));
}

/** A character no one-byte string holds: V8 answers at once that a one-byte string has none. */
const NOT_ONE_BYTE = /[\u0100-\uffff]/;

/** Whether a text may hold a bare @channel, @here or @everyone: a search for "@" runs at the speed
 * of memory in a one-byte text, but in a two-byte one stops at every unit holding the byte 0x40 (10
 * times slower than the words' expression), so only a one-byte text is searched. */
const mayHoldWords = (text: string): boolean => NOT_ONE_BYTE.test(text) || text.includes("@");

const breakWords = (text: string): string =>
  text.replace(/(?<!\w)@(?=(?:channel|here|everyone)\b)/gi, `@${ZWSP}`);

const DENSE_FROM = 1 << 16;

/** Whether a long text has more than one "<" in 64 characters (counted until it has). */
function manyOpeners(text: string): boolean {
  if (text.length < DENSE_FROM) return false;
  const enough = text.length >> 6;
  let n = 0;
  for (let i = text.indexOf("<"); i >= 0 && n < enough; i = text.indexOf("<", i + 1)) n++;
  return n >= enough;
}

/** Whether typed arrays read "ucs2" (UTF-16LE) bytes as units; else the replacements are used. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** 1 at the code units a mention's "<" comes before: "!", "@", "#". */
const MENTION_SIGN = new Uint8Array(0x10000);
MENTION_SIGN[33] = MENTION_SIGN[64] = MENTION_SIGN[35] = 1;

/** `text.replace(/<(?=[!@#])/g, "<\u200B")` over the text's UTF-16 units, without a branch per
 * unit: a zero-width space is written after every unit and kept only after a "<" before a sign. */
function breakOpeners(text: string): string {
  const bytes = Buffer.from(text, "ucs2");
  if (!LITTLE_ENDIAN || bytes.byteOffset % 2 !== 0) return text.replace(/<(?=[!@#])/g, `<${ZWSP}`);
  const units = new Uint16Array(bytes.buffer, bytes.byteOffset, text.length);
  // Each "<" breaks one of the two units it takes: at most half as many more, and one to spare.
  const out = new Uint16Array(text.length + (text.length >> 1) + 2);
  let o = 0;
  let c = units[0] ?? 0;
  for (let i = 1; i < units.length; i++) {
    const next = units[i] ?? 0;
    out[o++] = c;
    out[o] = 0x200b;
    o += (c === 60 ? 1 : 0) & (MENTION_SIGN[next] ?? 0);
    c = next;
  }
  if (units.length > 0) out[o++] = c;
  return Buffer.from(out.buffer, 0, o * 2).toString("ucs2");
}

const TO_ESCAPE = /[&<>]/; // one search first: most pieces of text have nothing to escape

/** Escapes `&`, `<` and `>`, which Slack mrkdwn reads as entities and links. */
export const escapeText = (s: string): string =>
  TO_ESCAPE.test(s) ? s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;") : s;

/** escapeText for a notification's line: a short text dense in `&`, `<`, `>` is copied by unit. */
export const escapeShort = (s: string): string =>
  LITTLE_ENDIAN && s.length <= ESCAPED.length / 5 && denseToEscape(s)
    ? escapeUnits(s)
    : escapeText(s);

/** Reused room for a short text escaped (five units at most for one): half the time and an eighth
 * of the garbage of replacements on a line of "<". */
const ESCAPED = new Uint16Array(4096);
/** Whether 4 of the first 32 characters are to escape (below that, replacements are faster). */
function denseToEscape(s: string): boolean {
  let n = 0;
  for (let i = 0; i < 32 && i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 38 || c === 60 || c === 62) n++;
  }
  return n >= 4;
}

function escapeUnits(s: string): string {
  const out = ESCAPED;
  let o = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 38) {
      out[o++] = 38; // &amp;
      out[o++] = 97;
      out[o++] = 109;
      out[o++] = 112;
      out[o++] = 59;
    } else if (c === 60 || c === 62) {
      out[o++] = 38; // &lt; or &gt;
      out[o++] = c === 60 ? 108 : 103;
      out[o++] = 116;
      out[o++] = 59;
    } else out[o++] = c;
  }
  return Buffer.from(out.buffer, out.byteOffset, o * 2).toString("ucs2");
}

/** Escapes text for Slack mrkdwn (section and context blocks) and neutralises mentions. */
export const mrkdwnText = (s: string): string => neutralizeMentions(escapeText(s));

/** Untrusted text as inline code of at most `max` characters (a backtick in it would end it). */
export const codeText = (s: string, max: number): string =>
  `\`${mrkdwnText(truncate(s, max)).replace(/`/g, "'")}\``;

/** Cuts a text to `n` characters with "…": never between the halves of an emoji (a lone surrogate
 * is not text: RFC 8259 §8.2), nor right after "@here" of a longer word. */
export const truncate = (s: string, n: number): string =>
  s.length <= n
    ? s
    : `${s
        .slice(0, n - 1)
        .replace(/[\uD800-\uDBFF]$/, "")
        .replace(/@(?:channel|here|everyone)$/i, "@")}…`;

/** A cut inside one long line: not inside `<…>`, `&…;` or an emoji's surrogate pair. */
export function safeCut(text: string, at: number): number {
  let cut = at;
  const lt = text.lastIndexOf("<", cut - 1);
  if (lt >= 0 && text.lastIndexOf(">", cut - 1) < lt) cut = lt;
  const amp = text.lastIndexOf("&", cut - 1);
  if (amp >= 0 && amp > cut - 6 && text.lastIndexOf(";", cut - 1) < amp) cut = amp;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return Math.max(0, cut);
}
