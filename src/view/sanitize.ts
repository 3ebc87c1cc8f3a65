/**
 * Model output must never ping anyone: Slack's special mentions (<!channel>, <!here>,
 * <!everyone>, <!subteam^…>), user and channel mentions (<@U…>, <#C…>) and the bare
 * @channel/@here/@everyone words are broken with a zero-width space. They still read the
 * same to a person; Slack no longer resolves them.
 */
export const ZWSP = "\u200B";

export function neutralizeMentions(text: string): string {
  // Lookarounds and a replacement without groups: V8's fast path, even for a line of "<!".
  return text
    .replace(/<(?=[!@#])/g, `<${ZWSP}`)
    .replace(/(?<!\w)@(?=(?:channel|here|everyone)\b)/gi, `@${ZWSP}`);
}

/** One search first: most pieces of text (a word, a code span) have nothing to escape. */
const TO_ESCAPE = /[&<>]/;

/** Escapes `&`, `<` and `>`, which Slack mrkdwn reads as entities and links. */
export const escapeText = (s: string): string =>
  TO_ESCAPE.test(s) ? s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;") : s;

/** Escapes text for Slack mrkdwn (section and context blocks) and neutralises mentions. */
export const mrkdwnText = (s: string): string => neutralizeMentions(escapeText(s));

/**
 * Cuts a text to `n` characters with "…": never between the halves of an emoji (a lone
 * surrogate is not text: RFC 8259 §8.2), nor right after "@here" of a longer word, which the
 * "…" would leave as a bare mention. (Found by fuzzing the renderers.)
 */
export const truncate = (s: string, n: number): string =>
  s.length <= n
    ? s
    : `${s
        .slice(0, n - 1)
        .replace(/[\uD800-\uDBFF]$/, "")
        .replace(/@(?:channel|here|everyone)$/i, "@")}…`;
