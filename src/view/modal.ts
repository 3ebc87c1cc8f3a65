/** The "New task" modal, opened by `/task` with no text and by the shortcuts. */
import { ALLOWED_EXTENSIONS, LIMITS } from "../service/limits.ts";
import { truncate } from "./sanitize.ts";
import { type Block, form, input, option, options, plain, quoteLines } from "./blocks.ts";

export const NEW_TASK_VIEW = "new_task";
export const NEW_TASK_SHORTCUT = "new_task";
export const ASK_SHORTCUT = "ask_task_agent";

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

export function renderNewTaskModal(seed: {
  readonly channelId?: string | undefined; // where it was opened: its default channel
  readonly prompt?: string | undefined; // its start (the message shortcut quotes its message)
  readonly choices: ModalChoices;
}): Block {
  const blocks = [
    input(
      FIELD.prompt,
      "What should the agent do?",
      {
        type: "plain_text_input",
        multiline: true,
        max_length: MODAL_PROMPT_MAX,
        placeholder: plain("Build a landing page for a bakery with a contact form"),
        ...(seed.prompt ? { initial_value: seed.prompt.slice(0, MODAL_PROMPT_MAX) } : {}),
      },
      {
        optional: true,
        hint: plain("Options may go first, e.g. [effort=high, thinking]. Attach files below."),
      },
    ),
    input(FIELD.channel, "Post the task in", {
      type: "conversations_select",
      ...(seed.channelId ? { initial_conversation: seed.channelId } : {}),
      default_to_current_conversation: true,
      filter: { include: ["public", "private", "im"], exclude_bot_users: true },
    }),
    nameInput(FIELD.agent, "Agent", seed.choices.agents, "The service's default agent"),
    nameInput(FIELD.model, "Model", seed.choices.models, "The service's default model"),
    input(
      FIELD.effort,
      "Reasoning effort",
      {
        type: "static_select",
        placeholder: plain("The service's default"),
        options: options(["low", "medium", "high"]),
      },
      { optional: true },
    ),
    input(
      FIELD.flags,
      "Options",
      {
        type: "checkboxes",
        options: [option("thinking", "Extended thinking"), option("context", "Context manager")],
      },
      { optional: true },
    ),
    input(
      FIELD.files,
      "Files",
      {
        type: "file_input",
        max_files: LIMITS.maxFiles,
        filetypes: [...ALLOWED_EXTENSIONS].map((e) => e.slice(1)),
      },
      {
        optional: true,
        hint: plain(
          `Up to ${LIMITS.maxFiles} files, 50 MB each, 200 MB in all: images, documents, text, audio, archives.`,
        ),
      },
    ),
  ];
  // Only the channel it was opened from; the submission says everything else.
  return form(NEW_TASK_VIEW, "New task", "Start task", blocks, {
    private_metadata: seed.channelId ?? "",
  });
}

/** The message shortcut's prompt: the message quoted, then a line for the question. */
export function quotePrompt(text: string): string {
  // truncate: a long message of emoji is not cut between the halves of one.
  return `${truncate(quoteLines(text.trim()), MODAL_PROMPT_MAX - 2)}\n\n`;
}

function nameInput(id: string, label: string, names: readonly string[], hint: string): Block {
  const element =
    names.length > 0
      ? {
          type: "static_select",
          placeholder: plain(hint),
          options: options(names),
        }
      : { type: "plain_text_input", max_length: 150, placeholder: plain(hint) };
  return input(id, label, element, { optional: true });
}
