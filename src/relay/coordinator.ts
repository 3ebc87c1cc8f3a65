/**
 * What happens in a task thread, independent of how Slack delivered it: a new task, a
 * reply that continues the conversation (or waits its turn), and Stop. The coordinator
 * keeps the store's view of each thread right and hands runs to the relay.
 */
import type { Logger } from "pino";
import type { TaskService, ThreadRef } from "../service/client.ts";
import type { TaskServiceError } from "../service/errors.ts";
import { validateTaskInput } from "../service/limits.ts";
import { describeServiceError, describeSlackPostError, slackErrorCode } from "../view/errors.ts";
import { renderPrompt, renderRun } from "../view/render.ts";
import type { SlackWriter, ThreadStore } from "./ports.ts";
import {
  IDLE,
  type QueuedFollowUp,
  type SlackThreadKey,
  type ThreadActivity,
  type ThreadRecord,
} from "../store/types.ts";
import type { Relay, RunOutcome } from "./relay.ts";

export interface NewTask {
  readonly teamId: string;
  readonly channelId: string;
  readonly userId: string;
  readonly prompt: string;
}

export interface ThreadReply {
  readonly key: SlackThreadKey;
  readonly userId: string;
  readonly text: string;
  readonly ts: string;
  readonly hasFiles: boolean;
}

export interface StopRequest {
  readonly key: SlackThreadKey;
  readonly userId: string;
  readonly runId: string;
}

export interface CoordinatorOptions {
  readonly service: TaskService;
  readonly writer: SlackWriter;
  readonly store: ThreadStore;
  readonly relay: Relay;
  readonly logger: Logger;
  readonly now?: () => number;
}

export const QUEUED_REACTION = "hourglass_flowing_sand";
/** A follow-up still "starting" after this long was abandoned by a crashed instance. */
const STARTING_TIMEOUT_MS = 120_000;
const FILES_NOT_SENT =
  "Your attachments were not sent to the task service (attachments are not supported yet); only your text was.";

/** Whether a thread is starting the run that answers the reply `replyTs`. */
const startingFor = (active: ThreadActivity, replyTs: string) =>
  active.kind === "starting" && active.replyTs === replyTs;

/** Tells the person who acted, privately. */
export type TellUser = (text: string) => Promise<void>;

export class TaskCoordinator {
  readonly #o: CoordinatorOptions;
  readonly #now: () => number;
  /** Threads whose follow-up is being started by this process. */
  readonly #starting = new Set<string>();

  constructor(options: CoordinatorOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** `/task <prompt>`, after the command was acknowledged and the prompt checked. */
  async startTask(task: NewTask, tell: TellUser): Promise<void> {
    const { writer, service, store, logger } = this.#o;
    const startedAt = this.#now();
    let threadTs: string;
    // Post first: without `chat:write.public` (not in the manifest, on purpose) a post that
    // succeeds proves the bot is a member and will hear replies in the thread. Only when it is
    // not in a public channel does it join (rate limited like an edit) and post again.
    const prompt = renderPrompt(task.userId, task.prompt);
    try {
      threadTs = await writer.post(task.channelId, prompt).catch(async (err: unknown) => {
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
      return;
    }
    const key: SlackThreadKey = { teamId: task.teamId, channelId: task.channelId, threadTs };
    const messageTs = await writer.post(
      task.channelId,
      renderRun({ text: "", state: "running", elapsedMs: 0 })[0] ?? {
        text: "Working…",
        blocks: [],
      },
      threadTs,
    );
    // The thread exists from now on: replies typed while the task is being created are
    // queued behind it, and another instance can end the message if this one dies.
    const pending = await Promise.all([
      store.putThread({
        ...key,
        projectId: "",
        threadId: "",
        ownerUserId: task.userId,
        active: { kind: "starting", since: startedAt, messageTs },
        lastRunId: undefined,
        queue: [],
        createdAt: startedAt,
        updatedAt: startedAt,
      }),
      this.#o.relay.reserve(key, messageTs, startedAt),
    ])
      .then(([, id]) => id)
      .catch((err: unknown) => {
        logger.warn({ err }, "could not record the task being created");
        return undefined;
      });
    const done = async () => {
      if (pending) await this.#o.relay.release(pending).catch(() => undefined);
    };
    let created: Awaited<ReturnType<TaskService["createTask"]>>;
    try {
      created = await service.createTask({
        prompt: task.prompt,
        metadata: {
          slack: {
            team_id: task.teamId,
            channel_id: task.channelId,
            user_id: task.userId,
            thread_ts: threadTs,
          },
        },
      });
    } catch (err) {
      logger.warn({ err, kind: (err as TaskServiceError).kind }, "creating the task failed");
      await this.#showError(key, messageTs, err, startedAt);
      await done();
      await this.#abandon(
        key,
        "The task could not be started, so your message was not sent. Start a new one with `/task`.",
      );
      return;
    }
    await store
      .updateThread(key, (rec) => ({
        ...rec,
        projectId: created.project_id,
        threadId: created.thread_id,
        active: { kind: "running", runId: created.agent_run_id, messageTs },
      }))
      .catch((err: unknown) => logger.error({ err }, "could not record the new task"));
    // Once the run itself is recorded, the reservation has served its purpose.
    await this.#o.relay.start({
      key,
      ref: { projectId: created.project_id, threadId: created.thread_id },
      runId: created.agent_run_id,
      messageTs,
      startedAt,
      owner: task.userId,
    });
    await done();
  }

  /** A person's message in a thread. Returns false when the thread is not a task thread. */
  async handleReply(reply: ThreadReply): Promise<boolean> {
    const { store, writer } = this.#o;
    const record = await store.getThread(reply.key);
    if (!record) return false;
    if (reply.text.trim() === "") {
      if (reply.hasFiles) {
        await writer.ephemeral(
          reply.key.channelId,
          reply.userId,
          "Attachments can't be sent to the task service yet. Please reply with text to continue the task.",
          reply.key.threadTs,
        );
      }
      return true;
    }
    try {
      validateTaskInput(reply.text, []);
    } catch (err) {
      await writer.ephemeral(
        reply.key.channelId,
        reply.userId,
        describeServiceError(err),
        reply.key.threadTs,
      );
      return true;
    }
    if (record.threadId === "" && record.active.kind === "idle") {
      await writer.ephemeral(
        reply.key.channelId,
        reply.userId,
        "This task could not be started, so there is nothing to continue. Start a new one with `/task`.",
        reply.key.threadTs,
      );
      return true;
    }
    await this.#reconcile(record);
    const item: QueuedFollowUp = {
      userId: reply.userId,
      text: reply.text,
      ts: reply.ts,
      hadFiles: reply.hasFiles,
    };
    let decision: "queued" | "start" = "queued";
    await store.updateThread(reply.key, (rec) => {
      if (rec.active.kind !== "idle" || rec.queue.length > 0) {
        decision = "queued";
        return { ...rec, queue: [...rec.queue, item] };
      }
      decision = "start";
      return { ...rec, active: { kind: "starting", since: this.#now(), replyTs: reply.ts } };
    });
    if (decision === "queued") {
      await Promise.allSettled([
        writer.react(reply.key.channelId, reply.ts, QUEUED_REACTION),
        writer.ephemeral(
          reply.key.channelId,
          reply.userId,
          "A run is still in progress in this thread. Your message is queued and will be sent as soon as it finishes.",
          reply.key.threadTs,
        ),
      ]);
      // The run may have ended between the check and the queueing.
      const now = await store.getThread(reply.key);
      if (now && now.active.kind === "idle") await this.#drain(reply.key);
      return true;
    }
    await this.#startFollowUp(reply.key, item);
    return true;
  }

  /** The Stop button. */
  async handleStop(req: StopRequest, tell: TellUser): Promise<void> {
    const { store, writer, relay, service, logger } = this.#o;
    const record = await store.getThread(req.key);
    if (!record) {
      await tell("This task is no longer known to me, so there is nothing to stop.");
      return;
    }
    if (req.userId !== record.ownerUserId) {
      let admin = false;
      try {
        admin = await writer.isAdmin(req.userId);
      } catch (err) {
        logger.warn({ err }, "could not check whether the user is an admin");
      }
      if (!admin) {
        await tell(
          `Only <@${record.ownerUserId}>, who started this task, or a workspace admin can stop it.`,
        );
        return;
      }
    }
    if (!(await store.claimOnce(req.key.teamId, `stop:${req.runId}`, 10 * 60_000))) return;
    const ref: ThreadRef = { projectId: record.projectId, threadId: record.threadId };
    if (await relay.stop(req.runId, ref, req.userId)) return;
    if (record.active.kind !== "running" || record.active.runId !== req.runId) {
      await tell("This run has already finished.");
      return;
    }
    // Not relayed by this process (e.g. after a restart): stop it on the service anyway.
    try {
      await service.stopAgent(ref);
      await tell("The run was stopped.");
    } catch (err) {
      await tell(describeServiceError(err, req.runId));
    }
  }

  /** Tells everyone whose reply waits in a thread that it will not be sent, and clears the queue. */
  async #abandon(key: SlackThreadKey, why: string): Promise<void> {
    let dropped: readonly QueuedFollowUp[] = [];
    await this.#o.store
      .updateThread(key, (rec) => {
        dropped = rec.queue;
        return { ...rec, queue: [], active: IDLE };
      })
      .catch((err: unknown) => this.#o.logger.warn({ err }, "could not clear a thread's queue"));
    await Promise.allSettled(
      dropped.map((q) => this.#o.writer.ephemeral(key.channelId, q.userId, why, key.threadTs)),
    );
  }

  /** Called by the relay when a run has shown its final state. */
  async onRunEnded(outcome: RunOutcome): Promise<void> {
    const runId = outcome.target.runId;
    await this.#o.store.updateThread(outcome.target.key, (rec) =>
      rec.active.kind === "running" && rec.active.runId === runId
        ? { ...rec, active: IDLE, lastRunId: runId }
        : undefined,
    );
    await this.#drain(outcome.target.key);
  }

  /** Starts the next queued follow-up, if the thread is idle. */
  async #drain(key: SlackThreadKey): Promise<void> {
    let next: QueuedFollowUp | undefined;
    await this.#o.store.updateThread(key, (rec) => {
      const [first, ...rest] = rec.queue;
      if (rec.active.kind !== "idle" || !first || rec.threadId === "") return undefined;
      next = first;
      return {
        ...rec,
        queue: rest,
        active: { kind: "starting", since: this.#now(), replyTs: first.ts },
      };
    });
    const item = next as QueuedFollowUp | undefined;
    if (!item) return;
    await this.#o.writer
      .unreact(key.channelId, item.ts, QUEUED_REACTION)
      .catch((err: unknown) =>
        this.#o.logger.debug({ err }, "could not remove the queued reaction"),
      );
    await this.#startFollowUp(key, item);
  }

  async #startFollowUp(key: SlackThreadKey, item: QueuedFollowUp): Promise<void> {
    const { writer, service, store, logger, relay } = this.#o;
    const id = `${key.teamId}/${key.channelId}/${key.threadTs}`;
    this.#starting.add(id);
    const startedAt = this.#now();
    let messageTs: string | undefined;
    let pending: string | undefined;
    try {
      const record = await store.getThread(key);
      if (!record) return;
      const note = item.hadFiles ? FILES_NOT_SENT : undefined;
      messageTs = await writer.post(
        key.channelId,
        renderRun({ text: "", state: "running", elapsedMs: 0, ...(note ? { note } : {}) })[0] ?? {
          text: "Working…",
          blocks: [],
        },
        key.threadTs,
      );
      const ref: ThreadRef = { projectId: record.projectId, threadId: record.threadId };
      // If this instance dies before the service answers, another one ends the message.
      pending = await relay.reserve(key, messageTs, startedAt).catch(() => undefined);
      const res = await service.continueConversation(ref, { prompt: item.text });
      const ts = messageTs;
      await store.updateThread(key, (rec) =>
        startingFor(rec.active, item.ts)
          ? { ...rec, active: { kind: "running", runId: res.agent_run_id, messageTs: ts } }
          : undefined,
      );
      await relay.start({
        key,
        ref,
        runId: res.agent_run_id,
        messageTs: ts,
        startedAt,
        owner: item.userId,
        ...(note ? { note } : {}),
      });
    } catch (err) {
      logger.warn({ err }, "starting a follow-up failed");
      if (messageTs) await this.#showError(key, messageTs, err, startedAt);
      await store.updateThread(key, (rec) =>
        startingFor(rec.active, item.ts) ? { ...rec, active: IDLE } : undefined,
      );
      // Nothing typed is lost: the next queued message still gets its turn.
      await this.#drain(key);
    } finally {
      if (pending) await relay.release(pending).catch(() => undefined);
      this.#starting.delete(id);
    }
  }

  /**
   * A thread the store says is busy but whose run nobody records as unfinished: the bot
   * crashed before recording it, or while starting a follow-up. Ask the service, and free
   * the thread when nothing runs. (A recorded run is relayed, or resumed, by some instance.)
   */
  async #reconcile(record: ThreadRecord): Promise<void> {
    const active = record.active;
    if (active.kind === "idle") return;
    if (active.kind === "running" && this.#o.relay.isActive(active.runId)) return;
    const id = `${record.teamId}/${record.channelId}/${record.threadTs}`;
    if (active.kind === "starting") {
      if (this.#starting.has(id) || this.#now() - active.since < STARTING_TIMEOUT_MS) return;
    } else {
      const runId = active.runId;
      if (await this.#o.store.getRun(runId)) return;
      try {
        const now = await this.#o.service.getTaskResult(
          { projectId: record.projectId, threadId: record.threadId },
          { timeout: 0 },
        );
        if (now.status === "running" && (now.agent_run_id ?? runId) === runId) return;
      } catch (err) {
        this.#o.logger.warn({ err }, "could not check a thread's leftover run");
        return;
      }
    }
    await this.#o.store.updateThread(record, (rec) =>
      sameActivity(rec.active, active) ? { ...rec, active: IDLE } : undefined,
    );
  }

  async #showError(
    key: SlackThreadKey,
    messageTs: string,
    err: unknown,
    startedAt: number,
  ): Promise<void> {
    const reason = describeServiceError(err);
    const payload = renderRun({
      text: "",
      state: "error",
      reason,
      elapsedMs: this.#now() - startedAt,
    })[0];
    if (!payload) return;
    try {
      await this.#o.writer.update(key.channelId, messageTs, payload);
    } catch (e) {
      this.#o.logger.error({ err: e }, "could not show an error in the thread");
    }
  }
}

/** Whether two records show the same start or run (a reconciled leftover is still the one seen). */
function sameActivity(a: ThreadActivity, b: ThreadActivity): boolean {
  if (a.kind === "running" && b.kind === "running") return a.runId === b.runId;
  if (a.kind === "starting" && b.kind === "starting") {
    return a.since === b.since && a.replyTs === b.replyTs && a.messageTs === b.messageTs;
  }
  return a.kind === b.kind;
}
