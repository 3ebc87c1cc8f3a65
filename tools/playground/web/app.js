// The playground page's logic: renders the workspace state and sends what the user does.
/* global document, fetch, btoa, EventSource */
import { renderMarkdown, renderMrkdwn, escapeHtml } from "./markdown.js";
import { keepInputs, renderModal, wireModal } from "./modal.js";

let state = null;
let current = "C0GENERAL";
let openThread = null;

const $ = (id) => document.getElementById(id);

/** POSTs JSON to the playground; a refusal (a file too large…) is shown under the composer. */
async function post(path, body) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  $("problem").textContent = res.ok ? "" : await res.text();
  $("problem").hidden = res.ok;
  return res;
}

async function refresh() {
  state = await (await fetch("/api/state")).json();
  render();
}

function who(m) {
  if (m.user === state.bot.id) return `<span class="who bot">${escapeHtml(state.bot.name)}</span>`;
  return `<span class="who">${m.user === state.you ? "you" : escapeHtml(m.user)}</span>`;
}

function showText(text) {
  return renderMrkdwn(text, { [state.bot.id]: state.bot.name, [state.you]: "you" });
}

/** Slack timestamps in order ("1700000000.000100": seconds, then the fraction). */
function compareTs(a, b) {
  const [as = "0", af = ""] = String(a).split(".");
  const [bs = "0", bf = ""] = String(b).split(".");
  return (
    as.length - bs.length ||
    as.localeCompare(bs) ||
    af.padEnd(6, "0").localeCompare(bf.padEnd(6, "0"))
  );
}

/** Messages and private messages in time order; a private one after the messages of its ts. */
function inTimeOrder(messages, privates, inThread) {
  const items = [
    ...messages.map((m, i) => ({ ts: m.ts, kind: 0, i, html: () => renderMessage(m, inThread) })),
    ...privates.map((e, i) => ({ ts: e.ts, kind: 1, i, html: () => renderEphemeral(e) })),
  ];
  items.sort((a, b) => compareTs(a.ts, b.ts) || a.kind - b.kind || a.i - b.i);
  return items.map((item) => item.html()).join("");
}

function renderBlock(m, b) {
  if (b.type === "markdown") return `<div class="md">${renderMarkdown(b.text)}</div>`;
  if (b.type === "section" || b.type === "header") {
    const t = b.text?.text ?? "";
    return `<div class="section">${b.type === "header" ? `<strong>${escapeHtml(t)}</strong>` : showText(t)}</div>`;
  }
  if (b.type === "context") {
    const parts = (b.elements ?? []).map((e) => (e.text ? showText(e.text) : ""));
    return `<div class="context">${parts.join(" ")}</div>`;
  }
  if (b.type === "actions") {
    const buttons = (b.elements ?? []).filter((e) => e.type === "button");
    return `<div class="actions">${buttons
      .map(
        (e) =>
          `<button type="button" class="${e.style === "danger" ? "danger" : ""}" data-ts="${escapeHtml(m.ts)}" data-thread="${escapeHtml(m.thread_ts ?? "")}" data-action="${escapeHtml(e.action_id)}" data-value="${escapeHtml(e.value ?? "")}" data-block="${escapeHtml(b.block_id ?? "")}">${escapeHtml(e.text?.text ?? "button")}</button>`,
      )
      .join("")}</div>`;
  }
  if (b.type === "context_actions") {
    // Slack's feedback buttons (👍 / 👎), each sending its own value.
    const buttons = (b.elements ?? [])
      .filter((e) => e.type === "feedback_buttons")
      .flatMap((e) => [e.positive_button, e.negative_button].map((btn) => ({ e, btn })));
    return `<div class="actions feedback">${buttons
      .map(
        ({ e, btn }) =>
          `<button type="button" title="${escapeHtml(btn?.accessibility_label ?? "")}" data-ts="${escapeHtml(m.ts)}" data-thread="${escapeHtml(m.thread_ts ?? "")}" data-action="${escapeHtml(e.action_id)}" data-value="${escapeHtml(btn?.value ?? "")}" data-block="${escapeHtml(b.block_id ?? "")}">${escapeHtml(btn?.text?.text ?? "")}</button>`,
      )
      .join("")}</div>`;
  }
  if (b.type === "divider") return "<hr />";
  if (b.type === "rich_text") return `<div>${showText(m.text ?? "")}</div>`;
  return "";
}

function renderMessage(m, inThread) {
  const blocks = m.blocks ?? [];
  const body = blocks.length
    ? blocks.map((b) => renderBlock(m, b)).join("")
    : showText(m.text ?? "");
  const files = (m.files ?? [])
    .map((id) => state.files.find((f) => f.id === id))
    .filter(Boolean)
    .map(
      (f) =>
        `<div class="file">↓ <a href="/files/${encodeURIComponent(f.id)}" download>${escapeHtml(f.name)}</a> <span class="context">${f.size} bytes</span>${
          // Images show inline, as Slack shows them, under their title (a page's preview too).
          f.image
            ? `<img class="inline-image" src="/files/${encodeURIComponent(f.id)}?inline=1" alt="${escapeHtml(f.title)}" title="${escapeHtml(f.title)}">`
            : ""
        }</div>`,
    )
    .join("");
  const attached = m.attached
    ? `<div class="file attached">↑ ${escapeHtml(m.attached)} <span class="context">attached</span></div>`
    : "";
  const replies = inThread
    ? ""
    : state.messages.filter((r) => r.channel === m.channel && r.thread_ts === m.ts && r.ts !== m.ts)
        .length;
  const link = replies
    ? `<button type="button" class="replies" data-open="${escapeHtml(m.ts)}">${replies} ${replies === 1 ? "reply" : "replies"}</button>`
    : "";
  return `<div class="msg" data-ts="${escapeHtml(m.ts)}">${who(m)}<div class="body">${body}</div>${attached}${files}${link}</div>`;
}

function renderEphemeral(e) {
  const body = e.blocks.length
    ? e.blocks.map((b) => renderBlock({ ts: "", thread_ts: e.threadTs }, b)).join("")
    : showText(e.text);
  const only = `<div class="only">Only visible to you <button type="button" class="dismiss" data-dismiss="${escapeHtml(e.id)}">Dismiss message</button></div>`;
  return `<div class="msg ephemeral" data-private="${escapeHtml(e.id)}"><span class="who bot">${escapeHtml(state.bot.name)}</span><div class="body">${body}</div>${only}</div>`;
}

const STEP_STATUS = { running: "⏳ running", completed: "✅ completed", failed: "❌ failed" };

/** The Run a task steps run here, newest first: their outputs, or why they failed. */
function renderSteps() {
  const html = [...state.steps]
    .reverse()
    .map((s) => {
      const outputs = Object.entries(s.outputs ?? {})
        .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(String(v))}</dd>`)
        .join("");
      const error = s.error ? `<dt>error</dt><dd>${escapeHtml(s.error)}</dd>` : "";
      return `<li><details><summary>${STEP_STATUS[s.status] ?? escapeHtml(s.status)}: ${escapeHtml(s.prompt.slice(0, 40))}</summary><dl>${outputs}${error}</dl></details></li>`;
    })
    .join("");
  const list = $("steps");
  const shown = html || `<li class="empty">Type a prompt, then <em>Run as step</em>.</li>`;
  if (list.innerHTML !== shown) list.innerHTML = shown;
}

/** Where the answers come from: the simulator's canned text, or the service it names. */
function renderServiceNote() {
  const note = $("service-note");
  const s = state.service;
  const html = s.simulator
    ? `Answers come from the <strong>Task service simulator</strong>: canned text, not a model. To use the real service, start the playground with <code>TASK_API_URL=https://… TASK_API_KEY=… npm run playground</code>.`
    : `Answers come from the Task service at <code>${escapeHtml(s.url)}</code>.`;
  if (note.innerHTML !== html) note.innerHTML = html;
}

function render() {
  const item = (c) =>
    `<li data-channel="${c.id}" class="${c.id === current ? "active" : ""}">${c.kind === "dm" ? "" : "# "}${escapeHtml(c.name)}</li>`;
  $("channels").innerHTML = state.channels
    .filter((c) => c.kind === "channel")
    .map(item)
    .join("");
  $("dms").innerHTML = state.channels
    .filter((c) => c.kind === "dm")
    .map(item)
    .join("");
  const channel = state.channels.find((c) => c.id === current);
  $("channel-title").textContent = channel.kind === "dm" ? channel.name : `#${channel.name}`;
  const top = state.messages.filter(
    (m) => m.channel === current && (!m.thread_ts || m.thread_ts === m.ts),
  );
  const eph = state.ephemerals.filter((e) => e.channel === current && !e.threadTs);
  keepScrolled($("messages"), inTimeOrder(top, eph, false));
  renderServiceNote();
  renderSteps();
  renderOverlay();
  $("thread").hidden = !openThread;
  if (openThread) {
    const msgs = state.messages.filter(
      (m) =>
        m.channel === openThread.channel &&
        (m.ts === openThread.ts || m.thread_ts === openThread.ts),
    );
    // Slack shows a private message in a thread only when the thread has replies.
    const teph =
      msgs.length > 1
        ? state.ephemerals.filter(
            (e) => e.channel === openThread.channel && e.threadTs === openThread.ts,
          )
        : [];
    keepScrolled($("thread-messages"), inTimeOrder(msgs, teph, true));
  }
}

function renderOverlay() {
  const html = renderModal(state.modal, state.channels);
  const overlay = $("overlay");
  overlay.hidden = html === "";
  // Redraw only when the view changed. As in Slack, what the person entered stays when the same
  // view comes back (with errors, or updated with the same block_id and action_id).
  const key = state.modal ? JSON.stringify(state.modal) : "";
  if (overlay.dataset.key !== key) {
    overlay.dataset.key = key;
    keepInputs(overlay, state.modal?.id, () => {
      overlay.innerHTML = html;
    });
  }
}

function keepScrolled(el, html) {
  if (el.innerHTML === html) return;
  const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  el.innerHTML = html;
  if (atBottom) el.scrollTop = el.scrollHeight;
}

async function readFile(input) {
  const file = input.files?.[0];
  if (!file) return undefined;
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  input.value = "";
  return { name: file.name, mimetype: file.type, base64: btoa(binary) };
}

async function send(text, fileInput, threadTs) {
  const file = await readFile(fileInput);
  if (!text.trim() && !file) return;
  await post("/api/send", {
    channel: threadTs ? openThread.channel : current,
    text,
    threadTs,
    file,
  });
  await refresh();
}

$("composer").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("text").value;
  $("text").value = "";
  void send(text, $("file"));
});
$("run-step").addEventListener("click", () => {
  const prompt = $("text").value;
  if (!prompt.trim()) return;
  $("text").value = "";
  void post("/api/step", { channel: current, prompt }).then(refresh);
});
$("thread-composer").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("thread-text").value;
  $("thread-text").value = "";
  void send(text, $("thread-file"), openThread.ts);
});
$("close-thread").addEventListener("click", () => {
  openThread = null;
  render();
});
document.body.addEventListener("click", (ev) => {
  const el = ev.target.closest("[data-channel],[data-open],[data-action],[data-dismiss]");
  if (!el || el.closest("#overlay")) return;
  if (el.dataset.dismiss) {
    el.disabled = true;
    void post("/api/private/dismiss", { id: el.dataset.dismiss }).then(refresh);
    return;
  }
  if (el.dataset.channel) {
    current = el.dataset.channel;
    openThread = null;
  } else if (el.dataset.open) {
    openThread = { channel: current, ts: el.dataset.open };
  } else {
    const channel = openThread?.channel ?? current;
    el.disabled = true;
    void post("/api/action", {
      channel,
      ts: el.dataset.ts,
      threadTs: el.dataset.thread || undefined,
      actionId: el.dataset.action,
      value: el.dataset.value,
      blockId: el.dataset.block || undefined,
    });
    return;
  }
  render();
});

wireModal($("overlay"), refresh, post);
new EventSource("/api/changes").onmessage = () => void refresh();
await refresh();
