/** SlackFileSource: attachments streamed from Slack's file host; the token goes nowhere else. */
import type { WebClient } from "@slack/web-api";
import { type Dispatcher, request } from "undici";
import { z } from "zod";
import {
  FileUnavailableError,
  type OpenedFile,
  type SlackFileRef,
  type SlackFileSource,
} from "../threads/ports.ts";
import { slackErrorCode } from "../view/errors.ts";

/** Where Slack serves `url_private_download` (Slack's "Working with files" page). */
const SLACK_FILE_HOST = "https://files.slack.com";

interface FileSourceOptions {
  readonly tokenFor: (teamId: string) => string | Promise<string>;
  /** For `files.info`, when an event carried only a file's id. */
  readonly client: Pick<WebClient, "files">;
  /** Origins whose URLs may carry the token (`fileOrigins`). */
  readonly allowedOrigins: ReadonlySet<string>;
  readonly dispatcher?: Dispatcher | undefined;
  /** How long Slack may take to start sending a file, and between two of its chunks. */
  readonly timeoutMs?: number | undefined;
}

export function fileOrigins(apiUrl: string | undefined): ReadonlySet<string> {
  const origins = new Set([SLACK_FILE_HOST]);
  if (apiUrl) origins.add(new URL(apiUrl).origin);
  return origins;
}

/** A file as an event, a `file_input` or `files.info` describes it (some events: only its id). */
export const SlackFile = z.object({
  id: z.string().min(1),
  name: z.string().nullish(),
  title: z.string().nullish(),
  size: z.number().int().nonnegative().nullish(),
  mimetype: z.string().nullish(),
  url_private_download: z.string().nullish(),
  url_private: z.string().nullish(),
  mode: z.string().nullish(),
});
const FileInfo = z.object({ file: SlackFile });

export function slackFileSource(options: FileSourceOptions): SlackFileSource {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    describe: async (teamId, file) =>
      withDetails(options.client, await options.tokenFor(teamId), file),
    async open(teamId, file) {
      const token = await options.tokenFor(teamId);
      const ref = file.url === undefined ? await withDetails(options.client, token, file) : file;
      const url = allowedUrl(ref.url, options.allowedOrigins);
      const res = await request(url, {
        method: "GET",
        headers: { authorization: `Bearer ${token}` },
        headersTimeout: timeoutMs,
        // The body may wait while the files before it are sent; `readWithin` times Slack only.
        bodyTimeout: 0,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
      }).catch((err: { code?: string }) => {
        throw new FileUnavailableError(
          `it could not be downloaded from Slack (${networkCause(err)})`,
        );
      });
      const length = Number(res.headers["content-length"] ?? ref.size ?? Number.NaN);
      const refusal = responseRefusal(res, length);
      if (refusal !== undefined) {
        drop(res.body);
        throw new FileUnavailableError(refusal);
      }
      const contentType = header(res.headers["content-type"]);
      return {
        size: length,
        ...(contentType ? { contentType } : {}),
        body: readWithin(res.body, timeoutMs),
        cancel: () => drop(res.body),
      } satisfies OpenedFile;
    },
  };
}

async function withDetails(client: FileSourceOptions["client"], token: string, file: SlackFileRef) {
  const info = await client.files
    .info({ token, file: file.id })
    .then((res) => FileInfo.parse(res).file)
    .catch((err: unknown) => {
      const code = slackErrorCode(err);
      throw new FileUnavailableError(
        code === "missing_scope"
          ? "the app may not read files (it needs the files:read scope: reinstall it)"
          : `Slack would not describe it (${code ?? "files.info failed"})`,
      );
    });
  return {
    ...file,
    name: info.name || info.title || file.name || file.id,
    size: file.size ?? info.size ?? undefined,
    mimetype: file.mimetype ?? info.mimetype ?? undefined,
    url: info.url_private_download ?? info.url_private ?? undefined,
    mode: file.mode ?? info.mode ?? undefined,
  } satisfies SlackFileRef;
}

function allowedUrl(raw: string | undefined, origins: ReadonlySet<string>): URL {
  let url: URL;
  try {
    url = new URL(raw ?? "");
  } catch {
    throw new FileUnavailableError("Slack gave no address to download it from");
  }
  if (!origins.has(url.origin)) {
    throw new FileUnavailableError("it is not stored on Slack's file host, so it was not read");
  }
  return url;
}

function responseRefusal(res: Dispatcher.ResponseData, length: number): string | undefined {
  const { statusCode } = res;
  if (statusCode === 404 || statusCode === 410) return "it is no longer in Slack (deleted?)";
  if (statusCode === 401 || statusCode === 403) {
    return "the app may not read it (it needs the files:read scope and access to the conversation)";
  }
  if (statusCode !== 200) return `Slack did not send it (HTTP ${statusCode})`;
  // Without a valid token Slack answers 200 with its sign-in page instead of the file.
  if (header(res.headers["content-type"])?.startsWith("text/html")) {
    return "Slack sent its sign-in page instead of the file (the app needs the files:read scope: reinstall it)";
  }
  return Number.isSafeInteger(length) && length >= 0
    ? undefined
    : "Slack did not say how large it is";
}

const header = (v: string | string[] | undefined): string | undefined =>
  Array.isArray(v) ? v[0] : v;

const networkCause = ({ code }: { code?: string }): string =>
  code === "UND_ERR_HEADERS_TIMEOUT" ? "Slack did not answer in time" : (code ?? "network error");

/** The body's chunks, failing when Slack sends nothing for `timeoutMs` while one is awaited. */
async function* readWithin(
  body: AsyncIterable<Uint8Array> & Parameters<typeof drop>[0],
  timeoutMs: number,
): AsyncGenerator<Uint8Array> {
  const it = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        const stop = () => reject(new FileUnavailableError("Slack stopped sending it"));
        timer = setTimeout(stop, timeoutMs);
      });
      try {
        const next = await Promise.race([it.next(), stalled]);
        if (next.done) return;
        yield next.value;
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    drop(body);
  }
}

/** Drops a download (undici's body emits an abort error when destroyed unread: expected here). */
function drop(body: { on(event: "error", listener: () => void): unknown; destroy(): unknown }) {
  body.on("error", () => undefined);
  body.destroy();
}
