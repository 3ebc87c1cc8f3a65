/**
 * A new task: its prompt posted in the channel (the thread), the task created on the service,
 * and its first run handed to the relay, with the thread recorded as starting meanwhile.
 */
import type { TaskServiceError } from "../service/errors.ts";
import type { UploadFile } from "../service/multipart.ts";
import type { CreateTaskResponse } from "../service/schemas.ts";
import type { SlackThreadKey } from "../store/types.ts";
import { blameDefaults } from "../view/defaults.ts";
import { describeServiceError, describeSlackPostError, slackErrorCode } from "../view/errors.ts";
import { renderPrompt, USAGE } from "../view/render.ts";
import { truncate } from "../view/sanitize.ts";
import { showWorking } from "./agent-status.ts";
import { type Attachments, brokenFileReason, readAttachments } from "./attachments.ts";
import { type TaskOptions, toCreateInput } from "./options.ts";
import type { TaskDefaultsUsed } from "./preferences.ts";
import type { NewTask, TellUser } from "./requests.ts";
import { type CoordinatorDeps, showStartError, workingMessage } from "./task-context.ts";

const NOT_STARTED =
  "The task could not be started, so your message was not sent. Start a new one with `/task`.";

export class NewTasks {
  readonly #deps: CoordinatorDeps;
  /** Tells whoever replied meanwhile that their reply will not be sent, and frees the thread. */
  readonly #abandon: (key: SlackThreadKey, why: string) => Promise<void>;

  constructor(deps: CoordinatorDeps, abandon: (key: SlackThreadKey, why: string) => Promise<void>) {
    this.#deps = deps;
    this.#abandon = abandon;
  }

  /** Starts a task whose prompt was checked; failures to post are told to the user. */
  async start(task: NewTask, used: TaskDefaultsUsed, tell: TellUser): Promise<void> {
    const attachments = await readAttachments(this.#deps, task.teamId, task.files ?? [], tell);
    if (task.prompt === "" && attachments.files.length === 0) {
      // Every file was left out (and named): there is nothing to send.
      if (attachments.leftOut.length === 0) await tell(USAGE);
      return;
    }
    try {
      await this.#start(task, used, attachments, tell);
    } finally {
      attachments.release();
    }
  }

  async #start(
    task: NewTask,
    used: TaskDefaultsUsed,
    attachments: Attachments,
    tell: TellUser,
  ): Promise<void> {
    const { writer, store, relay, logger, preferences, home } = this.#deps;
    const startedAt = this.#deps.now();
    // A mention or a DM is its own prompt: the answer goes in a thread under it.
    const threadTs = task.threadTs ?? (await this.#postPrompt(task, tell));
    if (threadTs === undefined) return;
    const key: SlackThreadKey = { teamId: task.teamId, channelId: task.channelId, threadTs };
    const messageTs = await writer.post(task.channelId, workingMessage(), threadTs);
    if (task.surface === "dm") await showWorking(this.#deps, key, sessionTitle(task));
    // Listed in the person's recent tasks meanwhile (the start does not wait for it).
    void preferences.taskStarted(task.teamId, task.userId, {
      channelId: task.channelId,
      threadTs,
      prompt: task.prompt || (task.files ?? []).map((f) => f.name).join(", "),
      startedAt,
      surface: task.surface ?? "channel",
    });
    const reservation = await this.#recordStarting(task, key, messageTs, startedAt);
    const release = async () => {
      if (reservation) await relay.release(reservation).catch(() => undefined);
    };
    let created: CreateTaskResponse;
    try {
      created = await this.#create(task, used.options, threadTs, attachments.files);
    } catch (err) {
      logger.warn({ err, kind: (err as TaskServiceError).kind }, "creating the task failed");
      const broken = attachments.broken();
      // A refusal that a default may have caused names it, so the person can change it.
      const blamed = blameDefaults(err, used.applied);
      const why = broken
        ? brokenFileReason(broken)
        : blamed && `${describeServiceError(err)} ${blamed}`;
      await showStartError(this.#deps, key, messageTs, err, startedAt, why);
      void preferences
        .taskState(task.teamId, task.userId, key, "error")
        .then(() => home.taskChanged(task.teamId, task.userId));
      await release();
      await this.#abandon(key, NOT_STARTED);
      return;
    }
    const runId = created.agent_run_id;
    await store
      .updateThread(key, (rec) => ({
        ...rec,
        projectId: created.project_id,
        threadId: created.thread_id,
        active: { kind: "running", runId, messageTs },
      }))
      .catch((err: unknown) => logger.error({ err }, "could not record the new task"));
    // Once the run itself is recorded, the reservation has served its purpose.
    await relay.start({
      key,
      ref: { projectId: created.project_id, threadId: created.thread_id },
      runId,
      messageTs,
      startedAt,
      owner: task.userId,
    });
    await release();
  }

  /**
   * Posts the prompt; its ts is the thread's. Posting first matters: without
   * `chat:write.public` (not in the manifest, on purpose) a post that succeeds proves the bot
   * is a member and will hear replies in the thread. Only when it is not in a public channel
   * does it join (rate limited like an edit) and post again.
   */
  async #postPrompt(task: NewTask, tell: TellUser): Promise<string | undefined> {
    const { writer, logger } = this.#deps;
    const names = (task.files ?? []).map((f) => f.name || f.id);
    const prompt = renderPrompt(task.userId, task.prompt, names);
    try {
      return await writer.post(task.channelId, prompt).catch(async (err: unknown) => {
        if (slackErrorCode(err) !== "not_in_channel" || !task.channelId.startsWith("C")) {
          throw err;
        }
        if (!(await writer.join(task.channelId))) throw err;
        return writer.post(task.channelId, prompt);
      });
    } catch (err) {
      const code = slackErrorCode(err) ?? "";
      const advice = describeSlackPostError(code, task.channelId);
      logger.warn({ err, code, channel: task.channelId }, "cannot post the task in the channel");
      await tell(
        advice ??
          `I couldn't post in this channel (Slack said \`${code || "error"}\`). Please try again.`,
      );
      return undefined;
    }
  }

  /**
   * The thread exists from now on: replies typed while the task is being created are queued
   * behind it, and another instance can end the message if this one dies (the relay's
   * reservation, whose id is returned).
   */
  async #recordStarting(
    task: NewTask,
    key: SlackThreadKey,
    messageTs: string,
    startedAt: number,
  ): Promise<string | undefined> {
    const { store, relay, logger } = this.#deps;
    return Promise.all([
      store.putThread({
        ...key,
        projectId: "",
        threadId: "",
        ownerUserId: task.userId,
        surface: task.surface ?? "channel",
        active: { kind: "starting", since: startedAt, messageTs },
        lastRunId: undefined,
        queue: [],
        createdAt: startedAt,
        updatedAt: startedAt,
      }),
      relay.reserve(key, messageTs, startedAt),
    ])
      .then(([, id]) => id)
      .catch((err: unknown) => {
        logger.warn({ err }, "could not record the task being created");
        return undefined;
      });
  }

  #create(
    task: NewTask,
    options: TaskOptions,
    threadTs: string,
    files: readonly UploadFile[],
  ): Promise<CreateTaskResponse> {
    return this.#deps.service.createTask({
      prompt: task.prompt,
      ...toCreateInput(options),
      ...(files.length > 0 ? { files } : {}),
      metadata: {
        slack: {
          team_id: task.teamId,
          channel_id: task.channelId,
          user_id: task.userId,
          thread_ts: threadTs,
        },
      },
    });
  }
}

/** A new agent session's title: the prompt's first line (or its files), as Slack lists it. */
function sessionTitle(task: NewTask): string {
  const line = task.prompt
    .split("\n")
    .find((l) => l.trim() !== "")
    ?.trim();
  const title = line ?? (task.files ?? []).map((f) => f.name).join(", ");
  return truncate(title, 200); // never inside an emoji
}
