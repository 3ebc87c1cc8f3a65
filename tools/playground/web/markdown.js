// A tiny Markdown (and Slack mrkdwn) to HTML renderer for the playground page: fenced code,
// headings, lists, tables, quotes, rules, paragraphs, **bold**, *italic*, `code` and links;
// mrkdwn's own syntax, mentions and emoji codes. Input is escaped first.

export function escapeHtml(text) {
  return String(text)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

const safeUrl = (url) => (/^(https?:|mailto:)/i.test(url) ? url : "#");

function inline(text) {
  const codes = [];
  let s = escapeHtml(text).replace(/`([^`]+)`/g, (_m, c) => `\uE000${codes.push(c) - 1}\uE000`);
  s = s
    .replace(
      /\[([^\]]+)\]\(([^)\s]+)\)/g,
      (_m, t, u) => `<a href="${safeUrl(u)}" target="_blank" rel="noreferrer">${t}</a>`,
    )
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>")
    .replace(/(^|\W)_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>")
    .replace(/~~([^~]+)~~/g, "<del>$1</del>");
  return s.replace(/\uE000(\d+)\uE000/g, (_m, i) => `<code>${codes[Number(i)]}</code>`);
}

/** Markdown as Slack's `markdown` block takes it. */
export function renderMarkdown(md) {
  const lines = String(md).split("\n");
  const out = [];
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) out.push(`<p>${para.map(inline).join("<br />")}</p>`);
    para = [];
    if (list) out.push(`</${list}>`);
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      flush();
      const code = [];
      while (++i < lines.length && !lines[i].trim().startsWith(fence[1])) code.push(lines[i]);
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flush();
      out.push("<hr />");
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && /^\s*\|?[\s:|-]+\|?\s*$/.test(lines[i + 1] ?? "")) {
      flush();
      const cells = (row) =>
        row
          .trim()
          .replace(/^\||\|$/g, "")
          .split("|");
      const head = cells(line).map((c) => `<th>${inline(c.trim())}</th>`);
      const rows = [];
      for (i += 2; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]); i++) {
        rows.push(
          `<tr>${cells(lines[i])
            .map((c) => `<td>${inline(c.trim())}</td>`)
            .join("")}</tr>`,
        );
      }
      i--;
      out.push(`<table><tr>${head.join("")}</tr>${rows.join("")}</table>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1].length + 2, 6);
      out.push(`<h${level}>${inline(heading[2])}</h${level}>`);
    } else if (item) {
      const kind = item[1] ? "ul" : "ol";
      if (para.length || list !== kind) flush();
      if (!list) out.push(`<${(list = kind)}>`);
      out.push(`<li>${inline(item[3])}</li>`);
    } else if (/^>\s?/.test(line)) {
      flush();
      out.push(`<blockquote>${inline(line.replace(/^>\s?/, ""))}</blockquote>`);
    } else if (!line.trim()) {
      flush();
    } else {
      if (list) flush();
      para.push(line);
    }
  }
  flush();
  return out.join("");
}

/** Slack's own escapes in mrkdwn text (&amp; &lt; &gt;) back to the characters they stand for. */
const unescapeSlack = (text) =>
  text.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");

/** `<…>` of Slack mrkdwn: a link, a mention of a person or channel, or a special mention. */
function angle(inner, names) {
  const [target, label] = [
    inner.split("|", 1)[0],
    inner.includes("|") ? inner.slice(inner.indexOf("|") + 1) : undefined,
  ];
  if (target.startsWith("@"))
    return `<span class="mention">@${escapeHtml(names[target.slice(1)] ?? label ?? target.slice(1))}</span>`;
  if (target.startsWith("#"))
    return `<span class="mention">#${escapeHtml(label ?? target.slice(1))}</span>`;
  if (target.startsWith("!"))
    return `<span class="mention">@${escapeHtml(label ?? target.slice(1).split("^")[0])}</span>`;
  const text = unescapeSlack(label ?? target);
  return `<a href="${escapeHtml(safeUrl(unescapeSlack(target)))}" target="_blank" rel="noreferrer">${escapeHtml(text)}</a>`;
}

/** One run of mrkdwn outside code: links, mentions, *bold*, _italic_, ~strike~, :emoji:. */
function mrkdwnInline(text, names) {
  const tokens = [];
  const keep = (html) => `\uE000${tokens.push(html) - 1}\uE000`;
  let s = text
    .replace(/`([^`\n]+)`/g, (_m, c) => keep(`<code>${escapeHtml(unescapeSlack(c))}</code>`))
    .replace(/<([^<>\n]+)>/g, (_m, inner) => keep(angle(inner, names)));
  s = escapeHtml(unescapeSlack(s))
    .replace(/(^|[^\w*])\*([^*\n]+)\*(?![\w*])/g, "$1<strong>$2</strong>")
    .replace(/(^|[^\w_])_([^_\n]+)_(?![\w_])/g, "$1<em>$2</em>")
    .replace(/(^|[^\w~])~([^~\n]+)~(?![\w~])/g, "$1<del>$2</del>")
    .replace(/:([a-z0-9_+-]+):/g, (m, n) => EMOJI[n] ?? m);
  const lines = s
    .split("\n")
    .map((line) =>
      line.startsWith("&gt; ") || line === "&gt;"
        ? `<blockquote>${line.slice(4).trimStart()}</blockquote>`
        : line,
    );
  s = lines.join("<br />").replaceAll("</blockquote><br />", "</blockquote>");
  return s.replace(/\uE000(\d+)\uE000/g, (_m, i) => tokens[Number(i)]);
}

/**
 * Slack mrkdwn (section and context text) as Slack shows it: ```fenced``` code as a block,
 * `code`, *bold*, _italic_, ~strike~, > quotes, links and mentions, :emoji: codes, and
 * Slack's escapes (&amp; &lt; &gt;) shown as the characters they stand for. `names` maps user
 * ids to the names mentions show.
 */
export function renderMrkdwn(text, names = {}) {
  const parts = String(text).split("```");
  // An unclosed fence is no code block: its backticks stay text.
  if (parts.length % 2 === 0) parts[parts.length - 2] += "```" + parts.pop();
  return parts
    .map((part, i) => {
      if (i % 2 === 0) return mrkdwnInline(part, names);
      const code = part.replace(/^\n/, "").replace(/\n$/, "");
      return `<pre><code>${escapeHtml(unescapeSlack(code))}</code></pre>`;
    })
    .join("");
}

/**
 * The emoji codes the app writes, and a few common ones, as their emoji (Slack's names).
 * A code not in the table is left as typed, as Slack does with an unknown one.
 */
const EMOJI = {
  white_check_mark: "\u2705",
  heavy_check_mark: "\u2714\uFE0F",
  warning: "\u26A0\uFE0F",
  x: "\u274C",
  hourglass_flowing_sand: "\u23F3",
  hourglass: "\u231B",
  octagonal_sign: "\u{1F6D1}",
  stop_button: "\u23F9\uFE0F",
  black_square_for_stop: "\u23F9\uFE0F",
  paperclip: "\u{1F4CE}",
  robot_face: "\u{1F916}",
  bust_in_silhouette: "\u{1F464}",
  gear: "\u2699\uFE0F",
  memo: "\u{1F4DD}",
  page_facing_up: "\u{1F4C4}",
  file_folder: "\u{1F4C1}",
  mag: "\u{1F50D}",
  bulb: "\u{1F4A1}",
  lock: "\u{1F512}",
  key: "\u{1F511}",
  tada: "\u{1F389}",
  rocket: "\u{1F680}",
  thumbsup: "\u{1F44D}",
  "+1": "\u{1F44D}",
  eyes: "\u{1F440}",
  information_source: "\u2139\uFE0F",
  no_entry: "\u26D4",
  arrows_counterclockwise: "\u{1F504}",
  speech_balloon: "\u{1F4AC}",
  hammer_and_wrench: "\u{1F6E0}\uFE0F",
};
