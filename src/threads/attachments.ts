/**
 * Attached files on their way to the service: its limits are applied to Slack's metadata before
 * any download, then each file is opened from Slack's file host; what cannot go is named and why.
 */
import { extname } from "node:path";
import type { Logger } from "pino";
import { ALLOWED_EXTENSIONS, LIMITS } from "../service/limits.ts";
import type { UploadFile } from "../service/multipart.ts";
import type { SlackFileRef } from "../store/types.ts";
import { formatBytes } from "../util/bytes.ts";
import { renderLeftOutFiles } from "../view/render.ts";
import { FileUnavailableError, type OpenedFile, type SlackFileSource } from "./ports.ts";

type LeftOut = { readonly name: string; readonly reason: string };

export interface Attachments {
  /** The files to send, each streamed from Slack when the request body is written. */
  readonly files: readonly UploadFile[];
  readonly leftOut: readonly LeftOut[];
  /** Drops the downloads not read (the request failed or was never sent). */
  release(): void;
  /** The file whose bytes stopped coming while the request was sent (Slack's fault), if any. */
  broken(): LeftOut | undefined;
}

export const NO_ATTACHMENTS: Attachments = {
  files: [],
  leftOut: [],
  release: () => undefined,
  broken: () => undefined,
};

/** Slack's file modes whose bytes are not Slack's to give (links, deleted or hidden files). */
const UNREADABLE_MODES: Readonly<Record<string, string>> = {
  external: "it is a link to another service, not a file stored in Slack",
  tombstone: "it was deleted",
  hidden_by_limit: "Slack hides it (the workspace is over its file storage limit)",
};

/** The first ten files that fit the limits, in order (a size Slack did not give: checked later). */
export function selectAttachments(files: readonly SlackFileRef[]) {
  const chosen: SlackFileRef[] = [];
  const leftOut: LeftOut[] = [];
  let total = 0;
  for (const file of files) {
    const reason = metadataRefusal(file, chosen.length, total);
    if (reason === undefined) {
      chosen.push(file);
      total += file.size ?? 0;
    } else {
      leftOut.push({ name: file.name, reason });
    }
  }
  return { chosen, leftOut };
}

function metadataRefusal(file: SlackFileRef, count: number, total: number): string | undefined {
  const mode = file.mode !== undefined ? UNREADABLE_MODES[file.mode] : undefined;
  if (mode !== undefined) return mode;
  const ext = extname(file.name).toLowerCase();
  if (!ALLOWED_EXTENSIONS.has(ext)) {
    return ext === ""
      ? "the task service only takes files with a known extension (e.g. .pdf, .png, .csv)"
      : `the task service does not take ${ext} files`;
  }
  if (count >= LIMITS.maxFiles) return `only ${LIMITS.maxFiles} files can go with one message`;
  return sizeRefusal(file.size, total);
}

function sizeRefusal(size: number | undefined, total: number): string | undefined {
  if (size === undefined) return undefined;
  if (size > LIMITS.maxFileBytes) {
    return `it is ${formatBytes(size)}; each file may be at most ${formatBytes(LIMITS.maxFileBytes)}`;
  }
  if (total + size > LIMITS.maxTotalBytes) {
    return `the files of one message may add up to at most ${formatBytes(LIMITS.maxTotalBytes)}`;
  }
  return undefined;
}

/** Opens the files that may go, in parallel; their bytes flow when the request is written. */
export async function gatherAttachments(
  source: SlackFileSource,
  teamId: string,
  files: readonly SlackFileRef[],
): Promise<Attachments> {
  if (files.length === 0) return NO_ATTACHMENTS;
  // An event may name a file only by its id: Slack describes it then.
  const described = await Promise.all(
    files.map((file) =>
      file.url !== undefined
        ? file
        : source.describe(teamId, file).catch((err: unknown) => ({
            name: file.name || file.id,
            reason: unavailableReason(err),
          })),
    ),
  );
  const unknown = described.flatMap((d) => ("reason" in d ? [d] : []));
  const { chosen, leftOut } = selectAttachments(
    described.flatMap((d) => ("reason" in d ? [] : [d])),
  );
  const opened = await Promise.all(
    chosen.map((file) =>
      source.open(teamId, file).then(
        (body) => ({ file, body }) as const,
        (err: unknown) => ({ file, reason: unavailableReason(err) }) as const,
      ),
    ),
  );
  const sent: Array<{ file: SlackFileRef; body: OpenedFile }> = [];
  const notes = [...unknown, ...leftOut];
  let total = 0;
  for (const item of opened) {
    if ("reason" in item) {
      notes.push({ name: item.file.name, reason: item.reason });
      continue;
    }
    const refusal = sizeRefusal(item.body.size, total);
    if (refusal !== undefined) {
      item.body.cancel();
      notes.push({ name: item.file.name, reason: refusal });
      continue;
    }
    total += item.body.size;
    sent.push(item);
  }
  let broken: LeftOut | undefined;
  const upload = (file: SlackFileRef, opened: OpenedFile): UploadFile => {
    const contentType = file.mimetype ?? opened.contentType;
    return {
      name: file.name,
      size: opened.size,
      ...(contentType ? { contentType } : {}),
      async *open() {
        try {
          yield* opened.body;
        } catch (err) {
          broken ??= { name: file.name, reason: unavailableReason(err) };
          throw err;
        }
      },
    };
  };
  return {
    files: sent.map(({ file, body }) => upload(file, body)),
    leftOut: notes,
    release: () => {
      for (const { body } of sent) body.cancel();
    },
    broken: () => broken,
  };
}

const unavailableReason = (err: unknown): string =>
  err instanceof FileUnavailableError ? err.message : "it could not be downloaded from Slack";

/** What a run's message says when a file stopped coming from Slack while it was sent. */
export const brokenFileReason = (f: LeftOut): string =>
  `"${f.name}" could not be read from Slack (${f.reason}), so nothing was sent to the task service. Please try again.`;

/** A request's attachments, opened, those left out named privately; the caller releases them. */
export async function readAttachments(
  deps: { readonly files: SlackFileSource; readonly logger: Logger },
  teamId: string,
  files: readonly SlackFileRef[],
  tell: (text: string) => Promise<void>,
): Promise<Attachments> {
  const attachments = await gatherAttachments(deps.files, teamId, files);
  if (attachments.leftOut.length > 0) {
    deps.logger.info({ leftOut: attachments.leftOut.length }, "attachments left out");
    await tell(renderLeftOutFiles(attachments.leftOut, attachments.files.length > 0)).catch(
      (err: unknown) => deps.logger.warn({ err }, "could not name the attachments left out"),
    );
  }
  return attachments;
}
