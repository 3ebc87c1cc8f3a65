/**
 * What Slack's mrkdwn would show raw if Markdown reached it: written from Slack's formatting
 * reference (mrkdwn has `*bold*`, `_italic_`, `~strike~`, code and `>` quotes, and no `**`,
 * headings or pipe tables), for the converter's tests and the e2e tests of the views.
 */
/**
 * The lines of mrkdwn that Slack formats: outside ``` blocks, each `code` span one letter
 * and the one-level quote marker dropped.
 */
function formattedLines(mrkdwn: string): string[] {
  const lines: string[] = [];
  let code = false;
  for (const line of mrkdwn.split("\n")) {
    const body = line.startsWith("> ") ? line.slice(2) : line;
    if (body === "```") code = !code;
    else if (!code) lines.push(body.replace(/`[^`\n]+`/g, "c"));
  }
  return lines;
}

/** What mrkdwn would show raw: `**`, a `#` heading line, a table's `|---|` rule line. */
export function rawMarkdown(mrkdwn: string): string | undefined {
  for (const line of formattedLines(mrkdwn)) {
    if (line.includes("**")) return `** in ${JSON.stringify(line)}`;
    if (/^ {0,3}#{1,6}(?:[ \t]|$)/.test(line)) return `heading ${JSON.stringify(line)}`;
    if (/^[\s|:-]*$/.test(line) && line.includes("|") && line.includes("-")) {
      return `table rule ${JSON.stringify(line)}`;
    }
  }
  return undefined;
}
