// The playground's modal: renders a Block Kit view the app opened (inputs, sections, buttons)
// and turns what the person does into Slack's `state.values` or a button press.
/* global btoa */
import { escapeHtml, renderMrkdwn } from "./markdown.js";

const plain = (t) => escapeHtml(t?.text ?? "");

function inputHtml(b, channels, error) {
  const e = b.element ?? {};
  const id = `in-${escapeHtml(b.block_id)}`;
  const data = `data-block="${escapeHtml(b.block_id)}" data-action="${escapeHtml(e.action_id)}" data-type="${escapeHtml(e.type)}"`;
  let field = "";
  if (e.type === "plain_text_input") {
    const value = escapeHtml(e.initial_value ?? "");
    const hint = escapeHtml(e.placeholder?.text ?? "");
    field = e.multiline
      ? `<textarea id="${id}" ${data} rows="4" placeholder="${hint}">${value}</textarea>`
      : `<input id="${id}" ${data} type="text" placeholder="${hint}" value="${value}" />`;
  } else if (e.type === "static_select") {
    const options = (e.options ?? [])
      .map((o) => `<option value="${escapeHtml(o.value)}">${plain(o.text)}</option>`)
      .join("");
    field = `<select id="${id}" ${data}><option value="">${plain(e.placeholder) || "—"}</option>${options}</select>`;
  } else if (e.type === "conversations_select") {
    const options = channels
      .map(
        (c) =>
          `<option value="${escapeHtml(c.id)}" ${c.id === e.initial_conversation ? "selected" : ""}>${c.kind === "dm" ? "" : "#"}${escapeHtml(c.name)}</option>`,
      )
      .join("");
    field = `<select id="${id}" ${data}><option value="">Choose a conversation</option>${options}</select>`;
  } else if (e.type === "checkboxes") {
    field = (e.options ?? [])
      .map(
        (o) =>
          `<label class="check"><input type="checkbox" ${data} value="${escapeHtml(o.value)}" /> ${plain(o.text)}</label>`,
      )
      .join("");
  } else if (e.type === "file_input") {
    field = `<input id="${id}" ${data} type="file" multiple />`;
  }
  const hint = b.hint ? `<div class="hint">${plain(b.hint)}</div>` : "";
  const err = error ? `<div class="error">${escapeHtml(error)}</div>` : "";
  return `<div class="input"><label for="${id}">${plain(b.label)}${b.optional ? ' <span class="context">(optional)</span>' : ""}</label>${field}${hint}${err}</div>`;
}

function button(e, blockId) {
  return `<button type="button" data-view-action="${escapeHtml(e.action_id)}" data-value="${escapeHtml(e.value ?? "")}" data-block="${escapeHtml(blockId ?? "")}">${plain(e.text)}</button>`;
}

function blockHtml(b, channels, errors) {
  if (b.type === "input") return inputHtml(b, channels, errors[b.block_id]);
  if (b.type === "section") {
    const accessory = b.accessory?.type === "button" ? button(b.accessory, b.block_id) : "";
    return `<div class="section">${renderMrkdwn(b.text?.text ?? "")}${accessory}</div>`;
  }
  if (b.type === "context") {
    return `<div class="context">${(b.elements ?? []).map((e) => renderMrkdwn(e.text ?? "")).join(" ")}</div>`;
  }
  if (b.type === "actions") {
    const buttons = (b.elements ?? []).filter((e) => e.type === "button");
    return `<div class="actions">${buttons.map((e) => button(e, b.block_id)).join("")}</div>`;
  }
  if (b.type === "divider") return "<hr />";
  return "";
}

const fieldKey = (el) =>
  `${el.dataset.block}\u0000${el.dataset.action}\u0000${el.type === "checkbox" ? el.value : ""}`;

/**
 * Redraws the modal with `redraw`; when the same view (`viewId`) is still shown, each input
 * gets back what the person had entered in it (matched by block_id and action_id, as Slack
 * keeps them after `response_action: errors` or a views.update).
 */
export function keepInputs(root, viewId, redraw) {
  const form = root.querySelector("form[data-view]");
  const entered = new Map();
  if (form && viewId && form.dataset.view === viewId) {
    for (const el of form.querySelectorAll("[data-block][data-action]")) {
      entered.set(fieldKey(el), { value: el.value, checked: el.checked, files: el.files });
    }
  }
  redraw();
  for (const el of root.querySelectorAll("form[data-view] [data-block][data-action]")) {
    const was = entered.get(fieldKey(el));
    if (!was) continue;
    if (el.type === "checkbox") el.checked = was.checked;
    else if (el.type === "file") {
      if (was.files?.length) el.files = was.files;
    } else el.value = was.value;
  }
}

/** The modal's HTML, or "" when none is open. */
export function renderModal(modal, channels) {
  if (!modal) return "";
  const v = modal.view;
  const blocks = (v.blocks ?? []).map((b) => blockHtml(b, channels, modal.errors)).join("");
  const submit = v.submit
    ? `<button type="submit" class="primary">${plain(v.submit)}</button>`
    : "";
  return `<form class="modal" data-view="${escapeHtml(modal.id)}" aria-label="${plain(v.title)}">
    <header>${plain(v.title)}</header><div class="modal-body">${blocks}</div>
    <footer><button type="button" data-close="${escapeHtml(modal.id)}">${plain(v.close) || "Close"}</button>${submit}</footer></form>`;
}

async function fileBody(f) {
  const bytes = new Uint8Array(await f.arrayBuffer());
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return { name: f.name, mimetype: f.type, base64: btoa(binary) };
}

/** Slack's `state.values` of the form, and its files as bytes. */
export async function readForm(form) {
  const values = {};
  const files = [];
  const put = (el, value) => {
    values[el.dataset.block] ??= {};
    values[el.dataset.block][el.dataset.action] = { type: el.dataset.type, ...value };
  };
  for (const el of form.querySelectorAll("[data-block][data-type]")) {
    const t = el.dataset.type;
    if (t === "plain_text_input") put(el, { value: el.value });
    else if (t === "static_select")
      put(el, {
        selected_option: el.value
          ? { value: el.value, text: { type: "plain_text", text: el.value } }
          : null,
      });
    else if (t === "conversations_select") put(el, { selected_conversation: el.value || null });
    else if (t === "checkboxes") {
      const prev = values[el.dataset.block]?.[el.dataset.action]?.selected_options ?? [];
      put(el, { selected_options: el.checked ? [...prev, { value: el.value }] : prev });
    } else if (t === "file_input" && el.files.length > 0) {
      files.push({
        block: el.dataset.block,
        action: el.dataset.action,
        files: await Promise.all([...el.files].map(fileBody)),
      });
    }
  }
  return { values, files };
}

/** Wires the modal's buttons and submission (once, on the page); `post` sends JSON. */
export function wireModal(root, refresh, post) {
  root.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const form = ev.target.closest("form[data-view]");
    if (!form) return;
    const { values, files } = await readForm(form);
    await post("/api/view/submit", { viewId: form.dataset.view, values, files });
    await refresh();
  });
  root.addEventListener("click", async (ev) => {
    const close = ev.target.closest("[data-close]");
    const act = ev.target.closest("[data-view-action]");
    const form = ev.target.closest("form[data-view]");
    if (close) await post("/api/view/close", { viewId: close.dataset.close });
    else if (act && form) {
      await post("/api/view/action", {
        viewId: form.dataset.view,
        actionId: act.dataset.viewAction,
        value: act.dataset.value,
        blockId: act.dataset.block || undefined,
      });
    } else return;
    await refresh();
  });
}
