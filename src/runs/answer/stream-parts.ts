/**
 * What one native stream message may hold, and where the answer goes on in the next one. Slack
 * refuses a streamed message (`msg_too_long`, on chat.appendStream or chat.stopStream) past about
 * 10,600–11,300 UTF-8 bytes, task updates included (measured by other projects; undocumented):
 * Japanese or emoji text reaches that at a third of the characters. So messages are counted in
 * bytes, and the answer goes on from a line end outside a code block, or in one that does not
 * fit, the block closed and reopened (same language), as `splitMarkdown` does; no line is cut.
 */
import { Buffer } from "node:buffer";
import type { FenceState } from "../../view/markdown-scan.ts";
import { StreamablePrefix } from "../../view/markdown.ts";
import { neutralizeMentions } from "../../view/sanitize.ts";
import { revealLinkHosts } from "../../view/scan/link-hosts.ts";

/**
 * A piece of the answer as streamed: as an edited message shows it (no mention pings, a link's
 * real host beside a label naming another). A piece that starts in code block `fence` is read
 * as code from its first line.
 */
export function asStreamed(piece: string, fence: FenceState | undefined): string {
  const open = fence?.open === undefined ? "" : `${fence.open}\n`;
  return neutralizeMentions(revealLinkHosts(open + piece).slice(open.length));
}

/**
 * Bytes of text one stream message is given: 1,600 below the lowest ceiling measured, for the
 * status and buttons its stop adds and Slack's own undocumented count (others roll over at ~9,000).
 */
export const STREAM_MESSAGE_BYTES = 9_000;

/** A language tag longer than this is no language tag: a reopened block goes without it. */
const INFO_MAX = 100;

export const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8");

/** The line that closes the code block open at the end of a message ("" when none is). */
export const closingLine = (fence: FenceState | undefined): string =>
  fence?.open === undefined ? "" : `${fence.open}\n`;

/** The line that opens that code block again at the start of the next message, as sent. */
export const reopeningLine = (fence: FenceState | undefined): string =>
  fence?.open === undefined
    ? ""
    : neutralizeMentions(`${fence.open}${fence.info.length <= INFO_MAX ? fence.info : ""}\n`);

/** A piece of the answer for one stream message, up to `end`, sent as `markdown` (`bytes`). */
export interface Piece {
  readonly end: number;
  readonly markdown: string;
  readonly bytes: number;
  /** The code block open at its end: closed when the message ends there. */
  readonly fence: FenceState | undefined;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(STREAM_MESSAGE_BYTES);

/** How many characters of `text` from `from` take at most `bytes` bytes in UTF-8. */
function charsWithin(text: string, from: number, bytes: number): number {
  if (scratch.length < bytes) scratch = new Uint8Array(bytes);
  // Whole code points only: a pair whose second half does not fit is left out whole.
  return encoder.encodeInto(text.slice(from, from + bytes), scratch.subarray(0, bytes)).read;
}

/**
 * The longest piece of `text` from `from` that `room` bytes hold, with the line closing its
 * code block if it ends in one: all the rest if it fits (`text` ends where the stream may end,
 * in code block `fenceAtEnd` if any), else up to a place where a message may end, outside code
 * unless that is less than half as far. `fence` is the code block open at `from`, if any.
 * Undefined when not even one line fits. Costs the length of the piece, never of the text.
 */
export function nextPiece(
  text: string,
  from: number,
  fence: FenceState | undefined,
  fenceAtEnd: FenceState | undefined,
  room: number,
): Piece | undefined {
  // A character takes a byte at least: a rest longer than the room cannot fit.
  if (text.length - from <= room) {
    const markdown = asStreamed(text.slice(from), fence);
    const bytes = utf8Bytes(markdown);
    if (bytes + utf8Bytes(closingLine(fenceAtEnd)) <= room) {
      return { end: text.length, markdown, bytes, fence: fenceAtEnd };
    }
  }
  // Broken mentions and a closing line take more than the text: a few tries with less.
  let raw = room;
  for (let tries = 0; tries < 4 && raw > 0; tries++) {
    const scan = new StreamablePrefix(fence);
    const final = scan.of(text.slice(from, from + charsWithin(text, from, raw))).length;
    const inCode = scan.outsideCode * 2 < final;
    const length = inCode ? final : scan.outsideCode;
    if (length <= 0) return undefined;
    const markdown = asStreamed(text.slice(from, from + length), fence);
    const bytes = utf8Bytes(markdown);
    const endFence = inCode ? scan.fence : undefined;
    const total = bytes + utf8Bytes(closingLine(endFence));
    if (total <= room) return { end: from + length, markdown, bytes, fence: endFence };
    raw = Math.min(raw - 1, Math.floor((raw * room) / total));
  }
  return undefined;
}
