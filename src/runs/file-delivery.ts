/**
 * A finished run's files in Slack: each read from the service within the memory budgets and
 * uploaded into the thread (once, even after a crash mid-upload); the others listed with why.
 */
import { extension } from "mime-types";
import type { Logger } from "pino";
import { freeFileBytes, sentSize } from "../service/result-file.ts";
import type { ResultFile } from "../service/schemas.ts";
import { TaskServiceError } from "../service/errors.ts";
import type { RelayedRun, RelayedRunProgress } from "../store/types.ts";
import { formatBytes } from "../util/bytes.ts";
import { slackErrorCode } from "../view/errors.ts";
import type { FileNote } from "../view/render.ts";
import type { MemoryLimits } from "./memory.ts";
import type {
  PagePreviews,
  SiteFile,
  SlackWriter,
  TaskService,
  ThreadRef,
  UploadItem,
} from "./ports.ts";
import { capAnswer, MAX_ANSWER_CHARS } from "./answer/cap.ts";

const NAME_MAX = 200;
/** Files uploaded into the thread per run; the others are listed (and reachable from Files). */
const MAX_UPLOADS_PER_RUN = 20;
/** Files in one upload (one Slack message). */
const UPLOAD_BATCH = 10;
// eslint-disable-next-line no-control-regex -- control characters are what is removed
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** A service file name made safe: its last path segment, no control characters, ≤ 200 chars. */
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

/** One file of the result, at `position` in its files: uploaded, or `note` says why not. */
interface PlannedFile {
  readonly file: ResultFile;
  readonly position: number;
  readonly upload: boolean;
  note: FileNote;
}

const tooLargeReason = (budget: number) =>
  `larger than ${formatBytes(budget)}, the most this app brings into Slack at once: get it from Files under the answer`;

/** Each file id once; one with a download link, past the 20th or over `budget` is listed. */
export function planFiles(files: readonly ResultFile[], budget: number): PlannedFile[] {
  const planned: PlannedFile[] = [];
  const seen = new Set<string>();
  let uploads = 0;
  files.forEach((file, position) => {
    if (seen.has(file.file_id)) return;
    seen.add(file.file_id);
    const size = file.file_size ?? undefined;
    const listed = file.download_url
      ? "too large to attach here"
      : uploads >= MAX_UPLOADS_PER_RUN
        ? `more than ${MAX_UPLOADS_PER_RUN} files: get it from Files under the answer`
        : size !== undefined && size > budget
          ? tooLargeReason(budget)
          : undefined;
    if (listed !== undefined) {
      planned.push({ file, position, upload: false, note: listedNote(file, listed) });
    } else {
      uploads++;
      const note = { name: uploadName(file), size, attached: true };
      planned.push({ file, position, upload: true, note });
    }
  });
  return planned;
}

/** A file listed rather than attached: why, and its download link if it has one. */
function listedNote(file: ResultFile, reason: string): FileNote {
  return {
    name: safeFileName(file.file_name),
    size: file.file_size ?? undefined,
    attached: false,
    reason,
    ...(file.download_url ? { url: file.download_url } : {}),
  };
}

export interface DeliveryContext {
  readonly writer: SlackWriter;
  readonly service: TaskService;
  readonly memory: MemoryLimits;
  readonly record: RelayedRun;
  /** This instance took the run over from another one. */
  readonly resumed: boolean;
  /** Records the upload state, so a new owner knows whether uploads may have happened. */
  readonly persist: (change: RelayedRunProgress) => Promise<void>;
  readonly log: Logger;
  readonly previews?: PagePreviews | undefined;
}

/** The file that carries an answer too long for its messages. */
const ANSWER_FILE = "answer.md";

/**
 * Uploads a run's files into its thread, with the whole answer as a Markdown file past
 * `MAX_ANSWER_CHARS`. Returns what the answer says of each file, and the answer as shown.
 */
export async function deliverAnswer(
  ctx: DeliveryContext,
  text: string,
  files: readonly ResultFile[],
): Promise<{ notes: FileNote[]; text: string }> {
  const { record } = ctx;
  const planned = planFiles(files, ctx.memory.runFileBytes);
  const delivered = (answerFile?: string) => ({
    notes: planned.map((p) => p.note),
    text: capAnswer(text, answerFile),
  });
  const uploads = planned.filter((p) => p.upload);
  if (text.length <= MAX_ANSWER_CHARS && uploads.length === 0) return delivered();
  let answerFile: string | undefined;
  if (text.length > MAX_ANSWER_CHARS) {
    // A service file of that name keeps it; the answer's goes by another.
    const taken = uploads.some((p) => p.note.name === ANSWER_FILE);
    answerFile = taken ? safeFileName(`answer-${record.runId}.md`) : ANSWER_FILE;
  }
  if (record.uploads === "done") return delivered(answerFile);
  const upload = new Uploads(ctx);
  try {
    await upload.begin();
    // The pictures first, while no file is held: the pages' files are read within the whole
    // run's budget, and the pictures (small) go up with the files, in their message.
    const pictures = await upload.pictures(planned);
    for (const p of uploads) await upload.file(p);
    if (answerFile !== undefined) {
      await upload.item({ filename: answerFile, bytes: Buffer.from(text, "utf8") });
    }
    for (const picture of pictures) await upload.picture(picture);
    await upload.end();
  } catch (err) {
    const code = slackErrorCode(err) ?? "error";
    ctx.log.error({ err, code }, "file upload failed");
    upload.failed(uploads, code);
    return delivered();
  }
  return delivered(answerFile);
}

/**
 * The uploads of one run: batches of at most 10 files within the run's file budget, each file's
 * share of the process's budget taken before it is read and given back once its batch is in Slack.
 */
class Uploads {
  readonly #ctx: DeliveryContext;
  /** Names already in the thread (a previous owner's uploads). */
  #already = new Set<string>();
  #batch: { item: UploadItem; note?: PlannedFile; release?: () => void }[] = [];
  readonly #sent = new Set<PlannedFile>();
  /** Bytes of the run's budget the batch holds. */
  #held = 0;
  /** Bytes of the pages' pictures held until they go up with the files. */
  #pictureBytes = 0;

  constructor(ctx: DeliveryContext) {
    this.#ctx = ctx;
  }

  async begin(): Promise<void> {
    const { record, resumed, writer, persist } = this.#ctx;
    if (record.uploads === "started" || resumed) {
      // A previous owner may have uploaded some or all of them (and perhaps could not record
      // it): upload only what did not reach the thread.
      const { channelId, threadTs } = record.key;
      this.#already = await writer
        .sharedFileNames(channelId, threadTs, record.controlTs ?? record.messageTs[0])
        .catch(() => new Set<string>());
    }
    await persist({ uploads: "started" });
  }

  async file(p: PlannedFile): Promise<void> {
    if (this.#already.has(p.note.name)) return;
    const { memory } = this.#ctx;
    const held = this.#held + this.#pictureBytes;
    if (held + reservation(p.file, memory.runFileBytes) > memory.runFileBytes) {
      await this.#flush();
    }
    const read = await readFile({ ...this.#ctx, ref: this.#ctx.record.ref }, p.file, p.position);
    if ("reason" in read) {
      p.note = listedNote(p.file, read.reason);
      return;
    }
    this.#held += read.held;
    await this.#add({ filename: p.note.name, bytes: read.bytes }, read.release, p);
  }

  /** The app's own file (the whole answer), already in memory. */
  item(item: UploadItem): Promise<void> {
    return this.#already.has(item.filename) ? Promise.resolve() : this.#add(item);
  }

  /** A picture of a page: its share of the budgets goes once it is in Slack. */
  async picture(item: UploadItem): Promise<void> {
    const { memory } = this.#ctx;
    const release = () => {
      memory.process.give(item.bytes.length);
      this.#pictureBytes -= item.bytes.length;
    };
    if (this.#already.has(item.filename)) return release();
    await this.#add(item, release);
  }

  async #add(item: UploadItem, release?: () => void, note?: PlannedFile): Promise<void> {
    this.#batch.push({ item, note, release });
    if (this.#batch.length >= UPLOAD_BATCH) await this.#flush();
  }

  /**
   * Pictures of the run's web pages, held in the budgets until their message goes (a tall page
   * of noise takes MBs); none without room for them in time.
   */
  async pictures(planned: readonly PlannedFile[]): Promise<UploadItem[]> {
    const { previews, memory, log } = this.#ctx;
    if (!previews) return [];
    const site = new SiteReads(this.#ctx, planned);
    let pictures: UploadItem[];
    try {
      pictures = await previews.render(site.files);
    } finally {
      site.release();
    }
    const bytes = pictures.reduce((n, p) => n + p.bytes.length, 0);
    if (bytes > 0 && !(await memory.process.take(bytes, memory.fileWaitMs))) {
      log.warn({ bytes }, "no room in the process's budget for the pages' pictures");
      return [];
    }
    this.#pictureBytes = bytes;
    return pictures;
  }

  async end(): Promise<void> {
    await this.#flush();
    await this.#ctx.persist({ uploads: "done" });
  }

  /** An upload failed: the files not in the thread yet (that batch's and later) are not. */
  failed(uploads: readonly PlannedFile[], code: string): void {
    for (const p of uploads) {
      if (p.note.attached && !this.#sent.has(p) && !this.#already.has(p.note.name)) {
        p.note = { ...p.note, attached: false, reason: `upload to Slack failed (${code})` };
      }
    }
    this.#release();
    // Pictures that never reached the batch give their share back too.
    this.#ctx.memory.process.give(this.#pictureBytes);
    this.#pictureBytes = 0;
  }

  async #flush(): Promise<void> {
    if (this.#batch.length === 0) return;
    const { writer, record } = this.#ctx;
    const batch = this.#batch;
    await writer.upload(
      record.key.channelId,
      record.key.threadTs,
      batch.map((b) => b.item),
    );
    for (const b of batch) if (b.note) this.#sent.add(b.note);
    this.#release();
  }

  /** The batch's files are in Slack (or never will be): their memory goes at once. */
  #release(): void {
    for (const b of this.#batch) b.release?.();
    this.#batch = [];
    this.#held = 0;
  }
}

/** The budget a file's content is read within: its size as sent when known, else all of it. */
function reservation(file: ResultFile, budget: number): number {
  const size = file.file_size ?? undefined;
  return size === undefined ? budget : Math.min(budget, Math.max(1024, sentSize(size)));
}

/** A file's content read within the budgets (`release` gives its `held` share back), or why not. */
type FileRead =
  | { readonly bytes: Buffer; readonly held: number; readonly release: () => void }
  | { readonly reason: string };

/**
 * Reads one file of a run's result: its share of the process's budget is taken first (waiting
 * at most `fileWaitMs`), and the service's answer is never read past `room`.
 */
export async function readFile(
  from: Pick<DeliveryContext, "service" | "memory" | "log"> & { readonly ref: ThreadRef },
  file: ResultFile,
  position: number,
  room = from.memory.runFileBytes,
): Promise<FileRead> {
  const { memory, service, ref, log } = from;
  const reserve = Math.min(room, reservation(file, memory.runFileBytes));
  if (!(await memory.process.take(reserve, memory.fileWaitMs))) {
    return {
      reason:
        "the app was busy bringing other files into Slack: get it from Files under the answer",
    };
  }
  try {
    const bytes = await service.readResultFile(
      ref,
      { position, fileId: file.file_id },
      { maxBytes: reserve },
    );
    if (bytes !== undefined) {
      const release = () => {
        freeFileBytes(bytes);
        memory.process.give(reserve);
      };
      return { bytes, held: reserve, release };
    }
    memory.process.give(reserve);
    return { reason: "content not available" };
  } catch (err) {
    memory.process.give(reserve);
    if (err instanceof TaskServiceError && err.kind === "too_large") {
      return { reason: tooLargeReason(memory.runFileBytes) };
    }
    log.warn({ err, position }, "could not read a generated file");
    return {
      reason: "the task service did not give its content: get it from Files under the answer",
    };
  }
}

/** The most of one file a page is given (as the service sends it): pages are for looking at. */
const SITE_FILE_MAX = 16 * 1024 * 1024;

/**
 * The run's files as its web pages may load them, each read when first asked for, within the
 * run's file budget (one that does not fit is served empty). All go once the pictures are taken.
 */
class SiteReads {
  readonly files: SiteFile[];
  /** Bytes of the run's budget the reads hold or asked for. */
  #held = 0;
  #closed = false;
  readonly #releases: (() => void)[] = [];

  constructor(ctx: DeliveryContext, planned: readonly PlannedFile[]) {
    const from = { ...ctx, ref: ctx.record.ref };
    const budget = Math.min(ctx.memory.runFileBytes, SITE_FILE_MAX);
    this.files = planned
      .filter((p) => !p.file.download_url)
      .map((p) => {
        let read: Promise<Buffer> | undefined;
        const load = async (): Promise<Buffer> => {
          const want = reservation(p.file, budget);
          if (this.#closed || this.#held + want > ctx.memory.runFileBytes) return Buffer.alloc(0);
          this.#held += want; // before any wait: reads at once share the budget
          const got = await readFile(from, p.file, p.position, want);
          if ("reason" in got) {
            this.#held -= want;
            return Buffer.alloc(0);
          }
          if (this.#closed) {
            got.release();
            return Buffer.alloc(0);
          }
          this.#releases.push(got.release);
          return got.bytes;
        };
        return {
          path: p.file.file_path || p.file.file_name,
          type: p.file.file_type ?? undefined,
          read: () => (read ??= load()),
        };
      });
  }

  release(): void {
    this.#closed = true;
    for (const release of this.#releases.splice(0)) release();
    this.#held = 0;
  }
}
