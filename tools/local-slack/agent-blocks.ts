// The newer message parts the double validates like Slack: the `context_actions` block (feedback
// and icon buttons under an answer; Block Kit reference, "Context actions block" and "Feedback
// buttons element") and message `metadata` (the "Using message metadata" page: an `event_type`
// string and a free-form `event_payload` object of strings, numbers, booleans and objects).
import type { Problem } from "./errors.ts";
import { isRecord, str, textField } from "./util.ts";

const CONTEXT_ACTIONS_MAX = 5;
const BUTTON_TEXT_MAX = 75;
const VALUE_MAX = 2_000;
const ACTION_ID_MAX = 255;

const bad = (message: string, pointer: string): Problem => ({
  error: "invalid_blocks",
  message,
  pointer,
});

function feedbackButton(button: unknown, at: string): Problem | undefined {
  if (!isRecord(button)) return bad("missing required field: button", at);
  if (!isRecord(button.text) || button.text.type !== "plain_text") {
    return bad("text must be a plain_text object", `${at}/text`);
  }
  const text = textField(button.text) ?? "";
  if (text === "" || text.length > BUTTON_TEXT_MAX) {
    return bad(`text must be 1 to ${BUTTON_TEXT_MAX} characters`, `${at}/text/text`);
  }
  const value = str(button.value);
  if (value === undefined || value === "" || value.length > VALUE_MAX) {
    return bad(`value must be 1 to ${VALUE_MAX} characters`, `${at}/value`);
  }
  const label = str(button.accessibility_label);
  if (label !== undefined && label.length > BUTTON_TEXT_MAX) {
    return bad(`must be less than ${BUTTON_TEXT_MAX + 1} characters`, `${at}/accessibility_label`);
  }
  return undefined;
}

function contextActionsElement(element: unknown, at: string): Problem | undefined {
  if (!isRecord(element)) return bad("missing required field: type", at);
  const actionId = str(element.action_id);
  if (actionId !== undefined && actionId.length > ACTION_ID_MAX) {
    return bad(`must be less than ${ACTION_ID_MAX + 1} characters`, `${at}/action_id`);
  }
  if (element.type === "feedback_buttons") {
    return (
      feedbackButton(element.positive_button, `${at}/positive_button`) ??
      feedbackButton(element.negative_button, `${at}/negative_button`)
    );
  }
  if (element.type === "icon_button") {
    if (str(element.icon) === undefined) return bad("missing required field: icon", `${at}/icon`);
    if (!textField(element.text)) return bad("missing required field: text", `${at}/text`);
    return undefined;
  }
  return bad(`unsupported type: ${String(element.type)}`, `${at}/type`);
}

/** A `context_actions` block: 1 to 5 feedback or icon buttons. */
export function validateContextActions(
  block: Record<string, unknown>,
  at: string,
): Problem | undefined {
  const elements = block.elements;
  if (!Array.isArray(elements) || elements.length === 0) {
    return bad("missing required field: elements", `${at}/elements`);
  }
  if (elements.length > CONTEXT_ACTIONS_MAX) {
    return bad(`must be less than ${CONTEXT_ACTIONS_MAX + 1} items`, `${at}/elements`);
  }
  for (const [i, element] of elements.entries()) {
    const problem = contextActionsElement(element, `${at}/elements/${i}`);
    if (problem) return problem;
  }
  return undefined;
}

const EVENT_TYPE = /^[A-Za-z0-9_]{1,255}$/;

function payloadValue(value: unknown, depth: number): boolean {
  if (typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (depth >= 2) return false;
  if (Array.isArray(value)) return value.every((v) => isRecord(v) && payloadValue(v, depth + 1));
  return isRecord(value) && Object.values(value).every((v) => payloadValue(v, depth + 1));
}

/**
 * A message's `metadata`: an object with an alphanumeric `event_type` and an `event_payload`
 * object. Slack answers `invalid_metadata_format` when it is no such object and
 * `invalid_metadata_schema` when the payload holds values it does not take (null, deep nesting).
 */
export function validateMetadata(metadata: unknown): Problem | undefined {
  if (metadata === undefined) return undefined;
  if (!isRecord(metadata) || !isRecord(metadata.event_payload)) {
    return { error: "invalid_metadata_format", message: "metadata must be an object" };
  }
  if (typeof metadata.event_type !== "string" || !EVENT_TYPE.test(metadata.event_type)) {
    return { error: "invalid_metadata_format", message: "event_type must be alphanumeric" };
  }
  if (!Object.values(metadata.event_payload).every((v) => payloadValue(v, 0))) {
    return {
      error: "invalid_metadata_schema",
      message: "event_payload values must be strings, numbers, booleans or objects of them",
    };
  }
  return undefined;
}
