// A tiny Markdown (and Slack mrkdwn) to HTML renderer for the playground page: fenced code,
// headings, lists, tables, quotes, rules, paragraphs, **bold**, *italic*, `code` and links. Input is escaped first.

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

/** Slack mrkdwn (section and context text): *bold*, _italic_, `code`, <url|label>. */
export function renderMrkdwn(text) {
  const links = [];
  const withoutLinks = String(text).replace(/<(https?:[^|>]+)(?:\|([^>]+))?>/g, (_m, u, t) => {
    links.push({ u, t: t ?? u });
    return `\uE001${links.length - 1}\uE001`;
  });
  const codes = [];
  let s = escapeHtml(withoutLinks).replace(
    /`([^`]+)`/g,
    (_m, c) => `\uE000${codes.push(c) - 1}\uE000`,
  );
  s = s
    .replace(/(^|\W)\*([^*\n]+)\*(?!\w)/g, "$1<strong>$2</strong>")
    .replace(/(^|\W)_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>")
    .replace(/:([a-z0-9_+-]+):/g, (_m, n) => EMOJI[n] ?? `:${n}:`)
    .replace(/\n/g, "<br />");
  s = s.replace(/\uE000(\d+)\uE000/g, (_m, i) => `<code>${codes[Number(i)]}</code>`);
  return s.replace(/\uE001(\d+)\uE001/g, (_m, i) => {
    const l = links[Number(i)];
    return `<a href="${escapeHtml(safeUrl(l.u))}" target="_blank" rel="noreferrer">${escapeHtml(l.t)}</a>`;
  });
}

const EMOJI = {
  // Symbols common fonts have (headless browsers often lack a colour emoji font).
  white_check_mark: "✔",
  warning: "⚠",
  x: "✖",
  hourglass_flowing_sand: "⧗",
  octagonal_sign: "■",
  stop_button: "■",
  black_square_for_stop: "■",
  paperclip: "⎘",
};
