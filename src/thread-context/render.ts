/** A Slack thread as the agent reads it (pure): its earlier messages as Markdown, and the prompt
 * that carries it, or the `thread.md` file when the prompt would be too long. */
import type { ThreadMessage } from "./history.ts";
import { LIMITS, promptLength } from "../service/limits.ts";

/** One message at most this long in the thread (a pasted log must not take all the room). */
const MESSAGE_MAX = 4000;
export const THREAD_FILE = "thread.md";

type RenderedThread = ReturnType<typeof renderThread>;

const clip = (s: string, max: number) =>
  [...s].length <= max ? s : `${[...s].slice(0, max - 1).join("")}…`;

function entry(m: ThreadMessage): string {
  const text = clip(m.text.trim(), MESSAGE_MAX);
  const files = m.fileNames.length > 0 ? `\n[files: ${m.fileNames.join(", ")}]` : "";
  return `**${m.author}**: ${text}${files}`;
}

/** The newest messages that fit the limits, oldest first, after a line counting the rest. */
export function renderThread(
  messages: readonly ThreadMessage[],
  omitted: number,
  limits: { readonly maxMessages: number; readonly maxChars: number },
) {
  const kept: string[] = [];
  let size = 0;
  for (let i = messages.length - 1; i >= 0 && kept.length < limits.maxMessages; i--) {
    const m = messages[i];
    if (!m) continue;
    const text = entry(m);
    if (size + text.length + 2 > limits.maxChars && kept.length > 0) break;
    kept.push(clip(text, limits.maxChars));
    size += text.length + 2;
  }
  kept.reverse();
  const left = omitted + messages.length - kept.length;
  const head = left > 0 ? [`… ${left} earlier message${left === 1 ? "" : "s"} not included`] : [];
  // omitted: left out by the thread's size limits, or beyond what was read.
  return { markdown: [...head, ...kept].join("\n\n"), included: kept.length, omitted: left };
}

/** The prompt with the thread before it, when that fits the service's prompt limit. */
export function promptWithThread(prompt: string, thread: RenderedThread): string | undefined {
  const inline = `Earlier messages of the Slack thread this was asked in (oldest first):\n\n${thread.markdown}\n\n---\n\n${prompt}`;
  return promptLength(inline) <= LIMITS.promptMaxChars ? inline : undefined;
}

/** The prompt pointing at the attached thread (as it is, when the pointer would not fit). */
export function promptWithThreadFile(prompt: string): string {
  const pointed = `${prompt}\n\n(The earlier messages of the Slack thread this was asked in are attached as ${THREAD_FILE}.)`;
  return promptLength(pointed) <= LIMITS.promptMaxChars ? pointed : prompt;
}

export function threadFile(thread: RenderedThread): string {
  return `# Earlier messages of the Slack thread (oldest first)\n\n${thread.markdown}\n`;
}

/** The remark under the answer: what of the thread the agent read. */
export function threadNote(thread: RenderedThread): string {
  const read = `Read ${thread.included} message${thread.included === 1 ? "" : "s"} of this thread`;
  return thread.omitted > 0 ? `${read} (${thread.omitted} earlier not included).` : `${read}.`;
}

/** Slack's message markup as plain text: `<@U1>` → `@name`, `<#C1|general>` → `#general`, `<!here>`
 * → `@here`, `<url|label>` → `label (url)`, and `&amp;`, `&lt;`, `&gt;` decoded. */
export function plainText(text: string, nameOf: (userId: string) => string | undefined): string {
  const marked = text.replace(/<([^<>\n]{1,1000})>/g, (_all, inner: string) => {
    const [target = "", label] = inner.split("|", 2);
    if (target.startsWith("@")) return `@${label ?? nameOf(target.slice(1)) ?? target.slice(1)}`;
    if (target.startsWith("#")) return `#${label ?? target.slice(1)}`;
    if (target.startsWith("!")) return `@${label ?? target.slice(1).split("^")[0]}`;
    return label !== undefined && label !== target ? `${label} (${target})` : target;
  });
  return marked.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
