/**
 * A finished run's files in Slack: inline ones uploaded into the thread with their exact
 * bytes (once, even after a crash mid-upload), the others listed with the reason and a link.
 */
import { extension } from "mime-types";
import type { Logger } from "pino";
import type { ResultFile } from "../service/schemas.ts";
import type { RelayedRun, RelayedRunProgress } from "../store/types.ts";
import { slackErrorCode } from "../view/errors.ts";
import type { FileNote } from "../view/render.ts";
import type { PagePreviews, SiteFile, SlackWriter, UploadItem } from "./ports.ts";
import { capAnswer, MAX_ANSWER_CHARS } from "./run-state.ts";

const MIME_TEXT = /^text\/|json|xml|csv|markdown|svg/;

const NAME_MAX = 200;
/** Files uploaded into the thread per run; the others are listed (and reachable from Files). */
export const MAX_UPLOADS_PER_RUN = 20;
// eslint-disable-next-line no-control-regex -- control characters are what is removed
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A file name from the service made safe to show and upload: its last path segment, without
 * control characters, at most 200 characters (the extension kept), never empty.
 */
export function safeFileName(raw: string): string {
  const base = (raw.split(/[/\\]/).at(-1) ?? "").replace(CONTROL, "").trim();
  const name = base === "" || base === "." || base === ".." ? "file" : base;
  if (name.length <= NAME_MAX) return name;
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : "";
  return `${name.slice(0, NAME_MAX - ext.length - 1)}…${ext}`;
}

/**
 * The name a file is uploaded with: Slack tells an image or a video (and shows it inline) by
 * its name's extension, so a name without one gets its media type's (`chart` → `chart.png`).
 */
export function uploadName(file: ResultFile): string {
  const name = safeFileName(file.file_name);
  if (/\.[A-Za-z0-9]{1,8}$/.test(name) || !file.file_type) return name;
  const ext = extension(file.file_type);
  return ext ? `${name}.${ext}` : name;
}

/**
 * The run's files as its web pages may load them. Each one's bytes are decoded when first read
 * (the browser asks for it): a run with no page, or a page that loads little, decodes nothing
 * or little more than its uploads did (a run's inline files may hold 200 MB).
 */
export function siteFiles(files: readonly ResultFile[]): SiteFile[] {
  return files.flatMap((f) => {
    if (inlineEncoding(f) === undefined) return [];
    let decoded: Buffer | undefined;
    const file: SiteFile = {
      path: f.file_path || f.file_name,
      type: f.file_type ?? undefined,
      get bytes() {
        decoded ??= decodeFile(f) ?? Buffer.alloc(0);
        return decoded;
      },
    };
    return [file];
  });
}

/** How an inline file's content is encoded, or undefined when it holds no bytes to decode. */
function inlineEncoding(file: ResultFile): "base64" | "utf8" | undefined {
  if (file.included_inline === false || typeof file.content !== "string") return undefined;
  const enc = (file.encoding ?? "").toLowerCase();
  if (enc === "base64") return "base64";
  if (enc === "utf-8" || enc === "utf8" || enc === "" || MIME_TEXT.test(file.file_type ?? "")) {
    return "utf8";
  }
  return undefined;
}

/** Decodes an inline file from the service into the exact bytes it stands for. */
export function decodeFile(file: ResultFile): Buffer | undefined {
  const enc = inlineEncoding(file);
  return enc === undefined || typeof file.content !== "string"
    ? undefined
    : Buffer.from(file.content, enc);
}

/** What to upload, and what the answer says about each file (each file id once). */
export function planFiles(files: readonly ResultFile[]): {
  notes: FileNote[];
  uploads: UploadItem[];
} {
  const notes: FileNote[] = [];
  const uploads: UploadItem[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.file_id)) continue;
    seen.add(f.file_id);
    const bytes = decodeFile(f);
    const size = f.file_size ?? bytes?.byteLength;
    if (bytes && uploads.length >= MAX_UPLOADS_PER_RUN) {
      notes.push({
        name: safeFileName(f.file_name),
        size,
        attached: false,
        reason: `more than ${MAX_UPLOADS_PER_RUN} files: get it from Files under the answer`,
        ...(f.download_url ? { url: f.download_url } : {}),
      });
      continue;
    }
    if (bytes) {
      uploads.push({ filename: uploadName(f), bytes });
      notes.push({ name: uploadName(f), size, attached: true });
      continue;
    }
    notes.push({
      name: safeFileName(f.file_name),
      size,
      attached: false,
      reason: f.included_inline === false ? "too large to attach here" : "content not available",
      ...(f.download_url ? { url: f.download_url } : {}),
    });
  }
  return { notes, uploads };
}

export interface DeliveryContext {
  readonly writer: SlackWriter;
  readonly record: RelayedRun;
  /** Whether this instance took the run over from another one. */
  readonly resumed: boolean;
  /** Records the upload state, so a new owner knows whether uploads may have happened. */
  readonly persist: (change: RelayedRunProgress) => Promise<void>;
  readonly log: Logger;
  /** Pictures of the run's web pages, uploaded beside them (none when absent). */
  readonly previews?: PagePreviews | undefined;
}

/** The name of the file that carries an answer too long for its messages. */
export const ANSWER_FILE = "answer.md";

export interface Delivered {
  /** What the final answer says about each of the service's files. */
  readonly notes: FileNote[];
  /** The name under which the whole answer is in the thread, when it was attached. */
  readonly answerFile?: string;
}

/**
 * Uploads a run's files into its thread, and, when `answer` is given (an answer longer than
 * its messages show), the whole answer as a Markdown file with them.
 */
export async function deliverFiles(
  ctx: DeliveryContext,
  files: readonly ResultFile[],
  answer?: string,
): Promise<Delivered> {
  const { writer, record, resumed, persist, log } = ctx;
  const { notes, uploads } = planFiles(files);
  let answerFile: string | undefined;
  if (answer !== undefined) {
    // A service file of that name keeps it; the answer's goes by another.
    const taken = uploads.some((u) => u.filename === ANSWER_FILE);
    answerFile = taken ? safeFileName(`answer-${record.runId}.md`) : ANSWER_FILE;
    uploads.push({ filename: answerFile, bytes: Buffer.from(answer, "utf8") });
  }
  const attached = answerFile === undefined ? {} : { answerFile };
  if (uploads.length === 0) return { notes };
  if (record.uploads === "done") return { notes, ...attached };
  const { channelId, threadTs } = record.key;
  // The pages' pictures go with the files (a run's previews are bounded in number and time;
  // the previewer tells which files are pages, and gives none when no file is).
  const pictures = ctx.previews ? await ctx.previews.render(siteFiles(files)) : [];
  let todo = [...uploads, ...pictures];
  if (record.uploads === "started" || resumed) {
    // A previous owner may have uploaded some or all of them (and perhaps could not record
    // it): upload only what did not reach the thread.
    const already = await writer
      .sharedFileNames(channelId, threadTs, record.controlTs ?? record.messageTs[0])
      .catch(() => new Set<string>());
    todo = todo.filter((u) => !already.has(u.filename));
  }
  try {
    await persist({ uploads: "started" });
    if (todo.length > 0) await writer.upload(channelId, threadTs, todo);
    await persist({ uploads: "done" });
  } catch (err) {
    const code = slackErrorCode(err) ?? "error";
    log.error({ err, code }, "file upload failed");
    return {
      notes: notes.map((n) =>
        n.attached ? { ...n, attached: false, reason: `upload to Slack failed (${code})` } : n,
      ),
    };
  }
  return { notes, ...attached };
}

/**
 * A finished run's files, and its answer as the messages show it: all of it, or, past
 * `MAX_ANSWER_CHARS`, its head and a line naming `answer.md`, the whole answer attached.
 */
export async function deliverAnswer(
  ctx: DeliveryContext,
  text: string,
  files: readonly ResultFile[],
): Promise<{ notes: FileNote[]; text: string }> {
  const whole = text.length > MAX_ANSWER_CHARS ? text : undefined;
  const { notes, answerFile } = await deliverFiles(ctx, files, whole);
  return { notes, text: capAnswer(text, answerFile) };
}
