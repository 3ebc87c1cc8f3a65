// Block Kit and message-content validation: rejects what Slack rejects (limits in limits.ts), with
// Slack's error codes and json-pointer detail. Exported for renderer unit tests that need no server.
import { Buffer } from "node:buffer";
import { validateContextActions, validateMetadata } from "./agent-blocks.ts";
import type { Problem } from "./errors.ts";
import type { LimitErrorCodes } from "./limits.ts";
import { DEFAULT_ERROR_CODES, KNOWN_BLOCK_TYPES, SLACK_LIMITS } from "./limits.ts";
import type { SlackArgs } from "./types.ts";
import { isRecord, str, textField } from "./util.ts";

function tooLong(max: number, pointer: string): Problem {
  return { error: "invalid_blocks", message: `must be less than ${max + 1} characters`, pointer };
}

function checkLength(
  value: string | undefined,
  min: number,
  max: number,
  pointer: string,
  what: string,
): Problem | undefined {
  if (value === undefined) {
    return { error: "invalid_blocks", message: `missing required field: ${what}`, pointer };
  }
  if (value.length < min) {
    return { error: "invalid_blocks", message: `must be at least ${min} characters`, pointer };
  }
  if (value.length > max) return tooLong(max, pointer);
  return undefined;
}

function validateButton(element: Record<string, unknown>, pointer: string): Problem | undefined {
  const textProblem = checkLength(
    textField(element.text),
    1,
    SLACK_LIMITS.buttonTextMax,
    `${pointer}/text/text`,
    "text",
  );
  if (textProblem) return textProblem;
  const value = str(element.value);
  if (value !== undefined && value.length > SLACK_LIMITS.buttonValueMax) {
    return tooLong(SLACK_LIMITS.buttonValueMax, `${pointer}/value`);
  }
  const url = str(element.url);
  if (url !== undefined && url.length > SLACK_LIMITS.buttonUrlMax) {
    return tooLong(SLACK_LIMITS.buttonUrlMax, `${pointer}/url`);
  }
  return undefined;
}

function validateElement(element: unknown, pointer: string): Problem | undefined {
  if (!isRecord(element) || typeof element.type !== "string") {
    return { error: "invalid_blocks", message: "missing required field: type", pointer };
  }
  const actionId = str(element.action_id);
  if (actionId !== undefined && actionId.length > SLACK_LIMITS.actionIdMax) {
    return tooLong(SLACK_LIMITS.actionIdMax, `${pointer}/action_id`);
  }
  return element.type === "button" ? validateButton(element, pointer) : undefined;
}

function validateSection(block: Record<string, unknown>, at: string): Problem | undefined {
  const fields = block.fields;
  if (block.text === undefined && fields === undefined) {
    return { error: "invalid_blocks", message: "must provide either text or fields", pointer: at };
  }
  if (block.text !== undefined) {
    const problem = checkLength(
      textField(block.text),
      1,
      SLACK_LIMITS.sectionTextMax,
      `${at}/text/text`,
      "text",
    );
    if (problem) return problem;
  }
  if (fields !== undefined) {
    if (!Array.isArray(fields) || fields.length > SLACK_LIMITS.sectionFieldsMax) {
      return {
        error: "invalid_blocks",
        message: `must be an array of at most ${SLACK_LIMITS.sectionFieldsMax} items`,
        pointer: `${at}/fields`,
      };
    }
    for (const [j, field] of fields.entries()) {
      const problem = checkLength(
        textField(field),
        1,
        SLACK_LIMITS.sectionFieldTextMax,
        `${at}/fields/${j}/text`,
        "text",
      );
      if (problem) return problem;
    }
  }
  return block.accessory === undefined
    ? undefined
    : validateElement(block.accessory, `${at}/accessory`);
}

/** context and actions blocks: a non-empty `elements` array of at most `max` items. */
function validateElements(
  block: Record<string, unknown>,
  at: string,
  max: number,
  checkEach: boolean,
): Problem | undefined {
  const elements = block.elements;
  if (!Array.isArray(elements) || elements.length === 0) {
    return {
      error: "invalid_blocks",
      message: "missing required field: elements",
      pointer: `${at}/elements`,
    };
  }
  if (elements.length > max) {
    return {
      error: "invalid_blocks",
      message: `must be less than ${max + 1} items`,
      pointer: `${at}/elements`,
    };
  }
  if (!checkEach) return undefined;
  for (const [j, element] of elements.entries()) {
    const problem = validateElement(element, `${at}/elements/${j}`);
    if (problem) return problem;
  }
  return undefined;
}

/** One block; `markdown` counts the characters of a markdown block toward the payload total. */
function validateBlock(
  block: unknown,
  at: string,
  markdown: { total: number },
): Problem | undefined {
  if (!isRecord(block) || typeof block.type !== "string") {
    return { error: "invalid_blocks", message: "missing required field: type", pointer: at };
  }
  const blockId = str(block.block_id);
  if (blockId !== undefined && blockId.length > SLACK_LIMITS.blockIdMax) {
    return tooLong(SLACK_LIMITS.blockIdMax, `${at}/block_id`);
  }
  if (!KNOWN_BLOCK_TYPES.has(block.type)) {
    return {
      error: "invalid_blocks",
      message: `unsupported type: ${block.type}`,
      pointer: `${at}/type`,
    };
  }
  switch (block.type) {
    case "section":
      return validateSection(block, at);
    case "header":
      return checkLength(
        textField(block.text),
        1,
        SLACK_LIMITS.headerTextMax,
        `${at}/text/text`,
        "text",
      );
    case "context":
      return validateElements(block, at, SLACK_LIMITS.contextElementsMax, false);
    case "actions":
      return validateElements(block, at, SLACK_LIMITS.actionsElementsMax, true);
    case "context_actions":
      return validateContextActions(block, at);
    case "markdown": {
      const text = str(block.text);
      if (text === undefined) {
        return {
          error: "invalid_blocks",
          message: "missing required field: text",
          pointer: `${at}/text`,
        };
      }
      markdown.total += text.length;
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Validates a blocks array the way Slack does for messages. Returns the first problem or undefined.
 * Exported so tests of src/ renderers can assert "Slack would accept this" without a server.
 */
export function validateBlocks(
  blocks: unknown,
  pointer = "/blocks",
  codes: LimitErrorCodes = DEFAULT_ERROR_CODES,
): Problem | undefined {
  if (!Array.isArray(blocks)) {
    return { error: "invalid_blocks_format", message: "must be an array", pointer };
  }
  if (blocks.length > SLACK_LIMITS.blocksMax) {
    return {
      error: codes.tooManyBlocks,
      message: `must be less than ${SLACK_LIMITS.blocksMax} items (got ${blocks.length}; at most ${SLACK_LIMITS.blocksMax} allowed)`,
      pointer,
    };
  }
  const markdown = { total: 0 };
  for (const [i, block] of blocks.entries()) {
    const problem = validateBlock(block, `${pointer}/${i}`, markdown);
    if (problem) return problem;
  }
  if (markdown.total > SLACK_LIMITS.markdownBlocksTotalMax) {
    return {
      error: codes.markdownBlocksTooLong,
      message: `markdown blocks total ${markdown.total} characters; at most ${SLACK_LIMITS.markdownBlocksTotalMax} allowed`,
      pointer,
    };
  }
  return undefined;
}

/**
 * Validates the content arguments of chat.postMessage / chat.postEphemeral / chat.update.
 * Exported for unit tests of renderers. Returns the first problem or undefined.
 */
export function validateMessageContent(
  args: SlackArgs,
  codes: LimitErrorCodes = DEFAULT_ERROR_CODES,
): Problem | undefined {
  const text = str(args.text);
  const markdownText = str(args.markdown_text);
  const blocks = args.blocks;
  const hasBlocks = Array.isArray(blocks) ? blocks.length > 0 : blocks !== undefined;
  if (markdownText !== undefined && ((text !== undefined && text !== "") || hasBlocks)) {
    return {
      error: "markdown_text_conflict",
      message: "markdown_text cannot be combined with text or blocks",
    };
  }
  if (markdownText !== undefined && markdownText.length > SLACK_LIMITS.markdownTextMax) {
    return {
      error: "msg_too_long",
      message: `markdown_text is ${markdownText.length} characters; at most ${SLACK_LIMITS.markdownTextMax} allowed`,
    };
  }
  if (text !== undefined && text.length > SLACK_LIMITS.textMax) {
    return {
      error: "msg_too_long",
      message: `text is ${text.length} characters; at most ${SLACK_LIMITS.textMax} allowed`,
    };
  }
  if (blocks !== undefined) {
    const problem = validateBlocks(blocks, "/blocks", codes);
    if (problem) return problem;
  }
  const metadataProblem = validateMetadata(args.metadata);
  if (metadataProblem) return metadataProblem;
  const hasAttachments = Array.isArray(args.attachments) && args.attachments.length > 0;
  if ((text === undefined || text === "") && !hasBlocks && !markdownText && !hasAttachments) {
    return { error: "no_text", message: "no text, blocks, markdown_text or attachments" };
  }
  return undefined;
}

const TASK_STATUSES = new Set(["pending", "in_progress", "complete", "error"]);

/** A `task_update` chunk: an id, a title and one of Slack's four statuses (TaskUpdateChunk). */
function validateTaskUpdate(chunk: Record<string, unknown>, at: string): Problem | undefined {
  for (const field of ["id", "title"] as const) {
    const value = str(chunk[field]);
    if (value === undefined || value === "") {
      return {
        error: "invalid_chunks",
        message: `missing required field: ${field}`,
        pointer: `${at}/${field}`,
      };
    }
  }
  if (!TASK_STATUSES.has(String(chunk.status))) {
    return {
      error: "invalid_chunks",
      message: "status must be pending, in_progress, complete or error",
      pointer: `${at}/status`,
    };
  }
  return undefined;
}

/** Validates the `chunks` argument of chat.startStream / appendStream / stopStream. */
export function validateChunks(chunks: unknown, codes: LimitErrorCodes): Problem | undefined {
  if (chunks === undefined) return undefined;
  if (!Array.isArray(chunks)) {
    return { error: "invalid_chunks", message: "must be an array", pointer: "/chunks" };
  }
  for (const [i, chunk] of chunks.entries()) {
    if (!isRecord(chunk) || typeof chunk.type !== "string") {
      return {
        error: "invalid_chunks",
        message: "missing required field: type",
        pointer: `/chunks/${i}`,
      };
    }
    if (chunk.type === "markdown_text") {
      const text = str(chunk.text);
      if (text === undefined) {
        return {
          error: "invalid_chunks",
          message: "missing required field: text",
          pointer: `/chunks/${i}/text`,
        };
      }
      if (text.length > SLACK_LIMITS.markdownTextMax) {
        return {
          error: "msg_too_long",
          message: `markdown_text chunk is ${text.length} characters; at most ${SLACK_LIMITS.markdownTextMax} allowed`,
          pointer: `/chunks/${i}/text`,
        };
      }
    } else if (chunk.type === "blocks") {
      const problem = validateBlocks(chunk.blocks, `/chunks/${i}/blocks`, codes);
      if (problem) return problem;
    } else if (chunk.type === "task_update") {
      const problem = validateTaskUpdate(chunk, `/chunks/${i}`);
      if (problem) return problem;
    }
  }
  return undefined;
}

/**
 * Validates the text arguments of chat.startStream / appendStream / stopStream: `markdown_text`
 * (at most 12,000 characters) and `chunks`. Exported for tests of what the app streams.
 */
export function validateStreamContent(
  args: SlackArgs,
  codes: LimitErrorCodes = DEFAULT_ERROR_CODES,
): Problem | undefined {
  const markdownText = str(args.markdown_text);
  if (markdownText !== undefined && markdownText.length > SLACK_LIMITS.markdownTextMax) {
    return {
      error: "msg_too_long",
      message: `markdown_text is ${markdownText.length} characters; at most ${SLACK_LIMITS.markdownTextMax} allowed`,
    };
  }
  return validateChunks(args.chunks, codes);
}

/** The text fields of a task_update chunk that count toward a streamed message's bytes. */
const TASK_TEXTS = ["title", "details", "output"] as const;

/**
 * UTF-8 bytes of the text one chat.startStream / appendStream / stopStream call streams into
 * its message: its `markdown_text`, its markdown chunks and its task updates' titles, details
 * and outputs (what counts toward SLACK_LIMITS.streamMessageBytesMax). Exported for tests of
 * what the app streams.
 */
export function streamedTextBytes(args: SlackArgs): number {
  const markdownText = str(args.markdown_text);
  let bytes = markdownText === undefined ? 0 : Buffer.byteLength(markdownText);
  for (const chunk of Array.isArray(args.chunks) ? args.chunks : []) {
    if (!isRecord(chunk)) continue;
    const fields =
      chunk.type === "task_update" ? TASK_TEXTS : chunk.type === "markdown_text" ? ["text"] : [];
    for (const field of fields) {
      const value = chunk[field];
      if (typeof value === "string") bytes += Buffer.byteLength(value);
    }
  }
  return bytes;
}
