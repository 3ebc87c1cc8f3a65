/** The most of an answer a run shows (a few Slack messages' worth, many times over). */
export const MAX_ANSWER_CHARS = 60_000;

/** The head of an answer past `MAX_ANSWER_CHARS`, and where the rest is: `attached`, or History. */
export function capAnswer(text: string, attached?: string): string {
  if (text.length <= MAX_ANSWER_CHARS) return text;
  const head = text.slice(0, MAX_ANSWER_CHARS).replace(/[\uD800-\uDBFF]$/, ""); // no half emoji
  const longer = `The answer is longer than ${MAX_ANSWER_CHARS.toLocaleString("en-US")} characters`;
  return attached === undefined
    ? `${head}\n\n_${longer}; the rest is kept by the task service: open History under the answer._`
    : `${head}\n\n_${longer}; all of it is in \`${attached}\`, attached below._`;
}

/** The running answer and a delta, never past `MAX_ANSWER_CHARS`: each edit renders all of it. */
export function appendCapped(text: string, delta: string): string {
  const room = MAX_ANSWER_CHARS - text.length;
  if (room <= 0) return text;
  if (delta.length <= room) return text + delta;
  const code = delta.charCodeAt(room - 1);
  return text + delta.slice(0, code >= 0xd800 && code <= 0xdbff ? room - 1 : room); // no half emoji
}
