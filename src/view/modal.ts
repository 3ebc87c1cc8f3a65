/** The "New task" modal, opened by `/task` with no text and by the shortcuts. */
import { ALLOWED_EXTENSIONS, LIMITS } from "../service/limits.ts";
import { truncate } from "./sanitize.ts";
import { type Block, plain } from "./blocks.ts";

/** The modal's `callback_id`, and the ids of the shortcuts that open it. */
export const NEW_TASK_VIEW = "new_task";
export const NEW_TASK_SHORTCUT = "new_task";
export const ASK_SHORTCUT = "ask_task_agent";

/** Block ids of the modal's inputs; each input's element has the action id `value`. */
export const FIELD = {
  prompt: "prompt",
  channel: "channel",
  agent: "agent",
  model: "model",
  effort: "effort",
  flags: "flags",
  files: "files",
} as const;
export const FIELD_ACTION = "value";

/** Slack's longest `plain_text_input` (its Block Kit reference); the service takes more. */
export const MODAL_PROMPT_MAX = 3000;

export interface ModalChoices {
  readonly models: readonly string[];
  readonly agents: readonly string[];
}

export interface ModalSeed {
  /** The conversation the modal was opened from (its default channel). */
  readonly channelId?: string | undefined;
  /** Text to start the prompt with (a quoted message, for the message shortcut). */
  readonly prompt?: string | undefined;
  readonly choices: ModalChoices;
}

export function renderNewTaskModal(seed: ModalSeed): Record<string, unknown> {
  return {
    type: "modal",
    callback_id: NEW_TASK_VIEW,
    title: plain("New task"),
    submit: plain("Start task"),
    close: plain("Cancel"),
    // Only the channel it was opened from; the submission says everything else.
    private_metadata: seed.channelId ?? "",
    blocks: [
      promptInput(seed.prompt),
      channelInput(seed.channelId),
      nameInput(FIELD.agent, "Agent", seed.choices.agents, "The service's default agent"),
      nameInput(FIELD.model, "Model", seed.choices.models, "The service's default model"),
      effortInput(),
      flagsInput(),
      filesInput(),
    ],
  };
}

/** The message shortcut's prompt: the message quoted, then a line for the question. */
export function quotePrompt(text: string): string {
  const quoted = text
    .trim()
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");
  // truncate: a long message of emoji is not cut between the halves of one.
  return `${truncate(quoted, MODAL_PROMPT_MAX - 2)}\n\n`;
}

function promptInput(initial: string | undefined): Block {
  return {
    type: "input",
    block_id: FIELD.prompt,
    optional: true,
    label: plain("What should the agent do?"),
    hint: plain("Options may go first, e.g. [effort=high, thinking]. Attach files below."),
    element: {
      type: "plain_text_input",
      action_id: FIELD_ACTION,
      multiline: true,
      max_length: MODAL_PROMPT_MAX,
      placeholder: plain("Build a landing page for a bakery with a contact form"),
      ...(initial ? { initial_value: initial.slice(0, MODAL_PROMPT_MAX) } : {}),
    },
  };
}

function channelInput(channelId: string | undefined): Block {
  return {
    type: "input",
    block_id: FIELD.channel,
    label: plain("Post the task in"),
    element: {
      type: "conversations_select",
      action_id: FIELD_ACTION,
      ...(channelId ? { initial_conversation: channelId } : {}),
      default_to_current_conversation: true,
      filter: { include: ["public", "private", "im"], exclude_bot_users: true },
    },
  };
}

/** A menu of the configured names, or free text when none are configured. */
function nameInput(id: string, label: string, names: readonly string[], hint: string): Block {
  const element =
    names.length > 0
      ? {
          type: "static_select",
          action_id: FIELD_ACTION,
          placeholder: plain(hint),
          options: names.map((n) => ({ text: plain(truncate(n, 75)), value: n })),
        }
      : {
          type: "plain_text_input",
          action_id: FIELD_ACTION,
          max_length: 150,
          placeholder: plain(hint),
        };
  return { type: "input", block_id: id, optional: true, label: plain(label), element };
}

function effortInput(): Block {
  return {
    type: "input",
    block_id: FIELD.effort,
    optional: true,
    label: plain("Reasoning effort"),
    element: {
      type: "static_select",
      action_id: FIELD_ACTION,
      placeholder: plain("The service's default"),
      options: ["low", "medium", "high"].map((e) => ({ text: plain(e), value: e })),
    },
  };
}

function flagsInput(): Block {
  return {
    type: "input",
    block_id: FIELD.flags,
    optional: true,
    label: plain("Options"),
    element: {
      type: "checkboxes",
      action_id: FIELD_ACTION,
      options: [
        { text: plain("Extended thinking"), value: "thinking" },
        { text: plain("Context manager"), value: "context" },
      ],
    },
  };
}

function filesInput(): Block {
  return {
    type: "input",
    block_id: FIELD.files,
    optional: true,
    label: plain("Files"),
    hint: plain(
      `Up to ${LIMITS.maxFiles} files, 50 MB each, 200 MB in all: images, documents, text, audio, archives.`,
    ),
    element: {
      type: "file_input",
      action_id: FIELD_ACTION,
      max_files: LIMITS.maxFiles,
      filetypes: [...ALLOWED_EXTENSIONS].map((e) => e.slice(1)),
    },
  };
}
