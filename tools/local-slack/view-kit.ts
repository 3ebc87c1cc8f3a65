// Validation of views (modals and the App Home tab) the way views.open / views.publish reject them,
// with Slack's `invalid_arguments` and json-pointer detail. Limits from Slack's "Reference: views"
// page and the Block Kit reference for input blocks and their elements.
import { validateBlocks } from "./block-kit.ts";
import type { Problem } from "./errors.ts";
import { isRecord, str, textField } from "./util.ts";

export const VIEW_LIMITS = {
  blocksMax: 100,
  titleMax: 24,
  buttonTextMax: 24,
  privateMetadataMax: 3000,
  callbackIdMax: 255,
  labelMax: 2000,
  hintMax: 2000,
  blockIdMax: 255,
  actionIdMax: 255,
  plainTextInputMax: 3000,
  selectOptionsMax: 100,
  checkboxOptionsMax: 10,
  optionTextMax: 75,
  optionValueMax: 150,
  fileInputMaxFiles: 10,
} as const;

const CONVERSATION_KINDS = new Set(["im", "mpim", "private", "public"]);
const INPUT_ELEMENTS = new Set([
  "plain_text_input",
  "static_select",
  "multi_static_select",
  "conversations_select",
  "multi_conversations_select",
  "channels_select",
  "multi_channels_select",
  "users_select",
  "multi_users_select",
  "checkboxes",
  "radio_buttons",
  "file_input",
  "number_input",
  "datepicker",
  "timepicker",
  "email_text_input",
  "url_text_input",
  "rich_text_input",
]);

const problem = (message: string, pointer: string): Problem => ({
  error: "invalid_arguments",
  message,
  pointer,
});

function plainText(value: unknown, max: number, pointer: string, required: boolean) {
  if (value === undefined && !required) return undefined;
  if (!isRecord(value) || value.type !== "plain_text") {
    return problem("must be a plain_text text object", pointer);
  }
  const text = textField(value) ?? "";
  if (text.length === 0) return problem("must be at least 1 characters", `${pointer}/text`);
  if (text.length > max)
    return problem(`must be less than ${max + 1} characters`, `${pointer}/text`);
  return undefined;
}

function options(list: unknown, max: number, pointer: string): Problem | undefined {
  if (!Array.isArray(list) || list.length === 0)
    return problem("must have at least 1 item", pointer);
  if (list.length > max) return problem(`must be less than ${max + 1} items`, pointer);
  const values = new Set<string>();
  for (const [i, option] of list.entries()) {
    const at = `${pointer}/${i}`;
    if (!isRecord(option)) return problem("must be an option object", at);
    const text = plainText(option.text, VIEW_LIMITS.optionTextMax, `${at}/text`, true);
    if (text) return text;
    const value = str(option.value) ?? "";
    if (value === "" || value.length > VIEW_LIMITS.optionValueMax) {
      return problem(`must be 1 to ${VIEW_LIMITS.optionValueMax} characters`, `${at}/value`);
    }
    if (values.has(value)) return problem("option values must be unique", `${at}/value`);
    values.add(value);
  }
  return undefined;
}

function inputElement(element: unknown, pointer: string): Problem | undefined {
  if (!isRecord(element) || typeof element.type !== "string") {
    return problem("missing required field: element", pointer);
  }
  if (!INPUT_ELEMENTS.has(element.type)) {
    return problem(`${element.type} is not a valid input element`, `${pointer}/type`);
  }
  const actionId = str(element.action_id);
  if (actionId !== undefined && actionId.length > VIEW_LIMITS.actionIdMax) {
    return problem(
      `must be less than ${VIEW_LIMITS.actionIdMax + 1} characters`,
      `${pointer}/action_id`,
    );
  }
  switch (element.type) {
    case "plain_text_input": {
      const max =
        typeof element.max_length === "number" ? element.max_length : VIEW_LIMITS.plainTextInputMax;
      if (max < 1 || max > VIEW_LIMITS.plainTextInputMax) {
        return problem(`must be at most ${VIEW_LIMITS.plainTextInputMax}`, `${pointer}/max_length`);
      }
      const initial = str(element.initial_value);
      if (initial !== undefined && initial.length > max) {
        return problem(`must be less than ${max + 1} characters`, `${pointer}/initial_value`);
      }
      return undefined;
    }
    case "static_select":
    case "multi_static_select":
    case "radio_buttons":
      return options(element.options, VIEW_LIMITS.selectOptionsMax, `${pointer}/options`);
    case "checkboxes":
      return options(element.options, VIEW_LIMITS.checkboxOptionsMax, `${pointer}/options`);
    case "conversations_select":
    case "multi_conversations_select": {
      const include = isRecord(element.filter) ? element.filter.include : undefined;
      if (
        include !== undefined &&
        (!Array.isArray(include) || include.some((k) => !CONVERSATION_KINDS.has(String(k))))
      ) {
        return problem("must be some of im, mpim, private, public", `${pointer}/filter/include`);
      }
      return undefined;
    }
    case "file_input": {
      const max = element.max_files;
      if (
        max !== undefined &&
        (typeof max !== "number" || max < 1 || max > VIEW_LIMITS.fileInputMaxFiles)
      ) {
        return problem(
          `must be from 1 to ${VIEW_LIMITS.fileInputMaxFiles}`,
          `${pointer}/max_files`,
        );
      }
      const types = element.filetypes;
      if (
        types !== undefined &&
        (!Array.isArray(types) || types.some((t) => typeof t !== "string" || t.startsWith(".")))
      ) {
        return problem("must be file type names without a dot", `${pointer}/filetypes`);
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function inputBlock(block: Record<string, unknown>, pointer: string): Problem | undefined {
  return (
    plainText(block.label, VIEW_LIMITS.labelMax, `${pointer}/label`, true) ??
    plainText(block.hint, VIEW_LIMITS.hintMax, `${pointer}/hint`, false) ??
    inputElement(block.element, `${pointer}/element`)
  );
}

function blocks(list: unknown, pointer: string): Problem | undefined {
  if (!Array.isArray(list)) return problem("must be an array", pointer);
  if (list.length > VIEW_LIMITS.blocksMax) {
    return problem(`must be less than ${VIEW_LIMITS.blocksMax + 1} items`, pointer);
  }
  const ids = new Set<string>();
  const others: unknown[] = [];
  for (const [i, block] of list.entries()) {
    const at = `${pointer}/${i}`;
    if (!isRecord(block)) return problem("must be a block object", at);
    const id = str(block.block_id);
    if (id !== undefined) {
      if (id.length > VIEW_LIMITS.blockIdMax)
        return problem("block_id is too long", `${at}/block_id`);
      if (ids.has(id)) return problem("block_id must be unique", `${at}/block_id`);
      ids.add(id);
    }
    const found = block.type === "input" ? inputBlock(block, at) : undefined;
    if (found) return found;
    if (block.type !== "input") others.push(block);
  }
  // The message blocks' own rules (sections, context, …) apply in views too.
  const other = others.length > 0 ? validateBlocks(others.slice(0, 50), pointer) : undefined;
  return other ? { ...other, error: "invalid_arguments" } : undefined;
}

/** The first reason Slack would refuse `view` (views.open, views.update, views.publish). */
export function validateView(view: unknown, pointer = "/view"): Problem | undefined {
  if (!isRecord(view)) return problem("must be a view object", pointer);
  if (view.type !== "modal" && view.type !== "home") {
    return problem("must be modal or home", `${pointer}/type`);
  }
  const metadata = str(view.private_metadata);
  if (metadata !== undefined && metadata.length > VIEW_LIMITS.privateMetadataMax) {
    return problem(
      `must be less than ${VIEW_LIMITS.privateMetadataMax + 1} characters`,
      `${pointer}/private_metadata`,
    );
  }
  const callbackId = str(view.callback_id);
  if (callbackId !== undefined && callbackId.length > VIEW_LIMITS.callbackIdMax) {
    return problem("callback_id is too long", `${pointer}/callback_id`);
  }
  if (view.type === "modal") {
    const head =
      plainText(view.title, VIEW_LIMITS.titleMax, `${pointer}/title`, true) ??
      plainText(view.submit, VIEW_LIMITS.buttonTextMax, `${pointer}/submit`, false) ??
      plainText(view.close, VIEW_LIMITS.buttonTextMax, `${pointer}/close`, false);
    if (head) return head;
    const hasInput =
      Array.isArray(view.blocks) && view.blocks.some((b) => isRecord(b) && b.type === "input");
    if (hasInput && view.submit === undefined) {
      return problem("submit is required when a view has input blocks", `${pointer}/submit`);
    }
  }
  return blocks(view.blocks, `${pointer}/blocks`);
}
