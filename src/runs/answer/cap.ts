/** The most of an answer a run shows (a few Slack messages' worth, many times over). */
export const MAX_ANSWER_CHARS = 60_000;

/**
 * What past `MAX_ANSWER_CHARS` becomes: the head, and a line saying where the rest is: the
 * file `attached` in the thread (the whole answer), or else the task service's History.
 */
export function capAnswer(text: string, attached?: string): string {
  if (text.length <= MAX_ANSWER_CHARS) return text;
  const head = text.slice(0, MAX_ANSWER_CHARS).replace(/[\uD800-\uDBFF]$/, ""); // no half emoji
  const longer = `The answer is longer than ${MAX_ANSWER_CHARS.toLocaleString("en-US")} characters`;
  return attached === undefined
    ? `${head}\n\n_${longer}; the rest is kept by the task service: open History under the answer._`
    : `${head}\n\n_${longer}; all of it is in \`${attached}\`, attached below._`;
}

/**
 * The running answer with one more delta, never past `MAX_ANSWER_CHARS` (the rest is attached
 * at the end): rendering a running answer costs its length at every edit.
 */
export function appendCapped(text: string, delta: string): string {
  const room = MAX_ANSWER_CHARS - text.length;
  if (room <= 0) return text;
  if (delta.length <= room) return text + delta;
  const code = delta.charCodeAt(room - 1);
  return text + delta.slice(0, code >= 0xd800 && code <= 0xdbff ? room - 1 : room); // no half emoji
}
