/**
 * Small in-process doubles for the coordinator's unit tests: a Slack writer that records what
 * was shown, a task service that answers with fresh ids, and a relay that records its runs.
 * Calls the coordinator never makes throw, so an unexpected one fails the test.
 */
import {
  FileUnavailableError,
  type OpenedFile,
  type SlackFileRef,
  type SlackFileSource,
  type SlackWriter,
  type TaskService,
} from "../../../src/threads/ports.ts";
import type { UploadFile } from "../../../src/service/multipart.ts";
import type { ReservationNote, RunOutcome, RunTarget } from "../../../src/runs/relay.ts";
import type { RelayControl } from "../../../src/threads/task-context.ts";
import type { MessagePayload } from "../../../src/view/render.ts";

const unused = (what: string) => () => {
  throw new Error(`${what} is not used by the coordinator`);
};

export interface Shown {
  readonly channelId: string;
  readonly ts: string;
  readonly threadTs: string | undefined;
  text: string;
}

export class RecordingWriter implements SlackWriter {
  readonly messages: Shown[] = [];
  readonly ephemerals: Array<{
    channelId: string;
    userId: string;
    text: string;
    threadTs?: string;
  }> = [];
  readonly reactions = new Map<string, string[]>();
  readonly admins = new Set<string>();
  #ts = 1_700_000_000;

  #held: Promise<void> | undefined;
  #releaseHeld = () => {};
  #postError: string | undefined;

  /** Posts wait (Slack's budget is spent) until `releasePosts`. */
  holdPosts(): void {
    this.#held = new Promise((resolve) => (this.#releaseHeld = resolve));
  }

  releasePosts(): void {
    this.#releaseHeld();
    this.#held = undefined;
  }

  /** Every post fails with this Slack error code from now on. */
  failPosts(code: string): void {
    this.#postError = code;
  }

  async post(channelId: string, payload: MessagePayload, threadTs?: string): Promise<string> {
    await this.#held;
    if (this.#postError)
      throw Object.assign(new Error(this.#postError), { data: { error: this.#postError } });
    const ts = `${++this.#ts}.000100`;
    this.messages.push({ channelId, ts, threadTs, text: payload.text });
    return ts;
  }

  async update(
    channelId: string,
    ts: string,
    payload: MessagePayload | (() => MessagePayload),
  ): Promise<void> {
    const shown = this.messages.find((m) => m.channelId === channelId && m.ts === ts);
    if (!shown) throw new Error(`no message ${ts}`);
    shown.text = (typeof payload === "function" ? payload() : payload).text;
  }

  async ephemeral(channelId: string, userId: string, text: string, threadTs?: string) {
    this.ephemerals.push({ channelId, userId, text, ...(threadTs ? { threadTs } : {}) });
  }

  async react(_channelId: string, ts: string, name: string): Promise<void> {
    this.reactions.set(ts, [...(this.reactions.get(ts) ?? []), name]);
  }

  async unreact(_channelId: string, ts: string, name: string): Promise<void> {
    this.reactions.set(
      ts,
      (this.reactions.get(ts) ?? []).filter((n) => n !== name),
    );
  }

  /** The agent-view status of each thread, as last set ("" once cleared). */
  readonly statuses = new Map<string, string>();

  async setStatus(_channelId: string, threadTs: string, status: string): Promise<void> {
    this.statuses.set(threadTs, status);
  }

  /** The agent-view title of each thread. */
  readonly titles = new Map<string, string>();

  async setTitle(_channelId: string, threadTs: string, title: string): Promise<void> {
    this.titles.set(threadTs, title);
  }

  /** The agent session status of each thread, as last set. */
  readonly sessions = new Map<string, string>();

  async setSessionStatus(_channelId: string, threadTs: string, status: string): Promise<void> {
    this.sessions.set(threadTs, status);
  }

  async join(): Promise<boolean> {
    return true;
  }

  /** People by id; anyone else is a member of the workspace ("T1"). */
  readonly people = new Map<string, { teamId: string; guest: boolean; deleted: boolean }>();

  async person(userId: string) {
    return this.people.get(userId) ?? { teamId: "T1", guest: false, deleted: false };
  }

  async isAdmin(userId: string): Promise<boolean> {
    return this.admins.has(userId);
  }

  remove = unused("remove");
  upload = unused("upload");
  startStream = unused("startStream");
  appendStream = unused("appendStream");
  stopStream = unused("stopStream");
  sharedFileNames = unused("sharedFileNames");

  /** What people see in a thread (bot messages), oldest first. */
  thread(threadTs: string): string[] {
    return this.messages.filter((m) => m.threadTs === threadTs).map((m) => m.text);
  }
}

type Service = Pick<
  TaskService,
  "createTask" | "continueConversation" | "getTaskResult" | "stopAgent"
>;

/** The service: every task and follow-up gets fresh ids; prompts are kept in order. */
export class FakeService implements TaskService {
  readonly prompts: string[] = [];
  /** Every create call's input, for the options it carried. */
  readonly created: Parameters<Service["createTask"]>[0][] = [];
  readonly stopped: string[] = [];
  /** The files each create or continue call sent, read whole: name → bytes. */
  readonly uploads: Array<Map<string, Buffer>> = [];
  /** What getTaskResult says a thread's run is doing. */
  status = "completed";
  #n = 0;

  createTask: Service["createTask"] = async (input) => {
    this.prompts.push(input.prompt ?? "");
    this.created.push(input);
    this.uploads.push(await readAll(input.files ?? []));
    const n = ++this.#n;
    return { project_id: `proj_${n}`, thread_id: `thr_${n}`, agent_run_id: `run_${n}` };
  };

  continueConversation: Service["continueConversation"] = async (_ref, input) => {
    this.prompts.push(input.prompt ?? "");
    this.uploads.push(await readAll(input.files ?? []));
    return { agent_run_id: `run_${++this.#n}` };
  };

  getTaskResult: Service["getTaskResult"] = async (ref) => ({
    thread_id: ref.threadId,
    status: this.status,
    response: { content: "" },
    code_blocks: [],
    files: [],
  });

  stopAgent: Service["stopAgent"] = async (ref) => {
    this.stopped.push(ref.threadId);
    return { status: "stopped" };
  };

  streamTaskResult = unused("streamTaskResult");
  getHistory = unused("getHistory");
  listFiles = unused("listFiles");
}

/** The relay: records the runs handed to it; `relayed` are the runs it says it relays. */
export class FakeRelay implements RelayControl {
  readonly started: RunTarget[] = [];
  readonly relayed = new Set<string>();
  readonly reserved = new Set<string>();
  #n = 0;

  async start(target: RunTarget): Promise<void> {
    this.started.push(target);
    this.relayed.add(target.runId);
  }

  async reserve(): Promise<string> {
    const id = `reservation_${++this.#n}`;
    this.reserved.add(id);
    return id;
  }

  /** What each reservation learnt (its thread, message and service run), by id. */
  readonly notes = new Map<string, ReservationNote[]>();

  async note(id: string, change: ReservationNote): Promise<void> {
    this.notes.set(id, [...(this.notes.get(id) ?? []), change]);
  }

  async release(id: string): Promise<void> {
    this.reserved.delete(id);
  }

  /** Runs asked to stop, and by whom. */
  readonly stopped: { runId: string; userId: string }[] = [];

  async stop(run: { readonly runId: string }, userId: string): Promise<boolean> {
    const { runId } = run;
    if (!this.relayed.has(runId)) return false;
    this.stopped.push({ runId, userId });
    return true;
  }

  isActive(runId: string): boolean {
    return this.relayed.has(runId);
  }

  /** Who listens for runs' ends (the coordinator subscribes when it is made). */
  readonly endListeners: ((outcome: RunOutcome) => Promise<void>)[] = [];

  onEnded(listener: (outcome: RunOutcome) => Promise<void>): void {
    this.endListeners.push(listener);
  }
}

async function readAll(files: readonly UploadFile[]): Promise<Map<string, Buffer>> {
  const read = new Map<string, Buffer>();
  for (const f of files) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of f.open()) chunks.push(chunk);
    read.set(f.name, Buffer.concat(chunks));
  }
  return read;
}

/** Slack's file host: files by id, or the reason one cannot be read; records what it opened. */
export class FakeFiles implements SlackFileSource {
  readonly #files = new Map<string, Buffer | string>();
  readonly opened: string[] = [];
  readonly cancelled: string[] = [];
  /** Files whose download stops halfway through. */
  readonly breaksHalfway = new Set<string>();
  #n = 0;

  /** A file in Slack; `unavailable` makes its download fail with that reason. */
  add(name: string, content: string | { size: number }, unavailable?: string): SlackFileRef {
    const id = `F${++this.#n}`;
    const bytes = typeof content === "string" ? Buffer.from(content) : Buffer.alloc(content.size);
    this.#files.set(id, unavailable ?? bytes);
    return {
      id,
      name,
      size: bytes.length,
      url: `https://files.slack.com/files-pri/T1-${id}/${name}`,
    };
  }

  async describe(_teamId: string, file: SlackFileRef): Promise<SlackFileRef> {
    return file;
  }

  async open(_teamId: string, file: SlackFileRef): Promise<OpenedFile> {
    const found = this.#files.get(file.id);
    if (found === undefined) throw new FileUnavailableError("it is no longer in Slack (deleted?)");
    if (typeof found === "string") throw new FileUnavailableError(found);
    this.opened.push(file.name);
    const breaks = this.breaksHalfway.has(file.name);
    return {
      size: found.length,
      body: (async function* () {
        yield found.subarray(0, breaks ? found.length >> 1 : found.length);
        if (breaks) throw new FileUnavailableError("Slack stopped sending it");
      })(),
      cancel: () => this.cancelled.push(file.name),
    };
  }
}
