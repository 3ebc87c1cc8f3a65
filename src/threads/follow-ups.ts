/** Replies in a task thread: each starts a new run, or waits in the thread's queue while one runs. */
import { validateTaskInput } from "../service/limits.ts";
import {
  IDLE,
  type QueuedFollowUp,
  type RunOpening,
  serviceRunId,
  type SlackThreadKey,
  type ThreadActivity,
  type ThreadRecord,
} from "../store/types.ts";
import { describeServiceError } from "../view/errors.ts";
import { clearWorking } from "../runs/agent-status.ts";
import { brokenFileReason, NO_ATTACHMENTS, readAttachments } from "./attachments.ts";
import { askerRefusal } from "./access/checks.ts";
import { notForFollowUps, parsePrompt } from "./options.ts";
import type { RunOutcome } from "../runs/relay.ts";
import type { ThreadReply } from "./requests.ts";
import { startRun } from "../runs/start.ts";
import { type CoordinatorDeps, showStartError } from "./coordinator-deps.ts";

const QUEUED_REACTION = "hourglass_flowing_sand";
/** A run still "starting" after this long was abandoned by a crashed instance. */
const STARTING_TIMEOUT_MS = 120_000;
const NOTHING_TO_CONTINUE =
  "This task could not be started, so there is nothing to continue. Start a new one with `/task`.";
/** Replies that may wait in one thread: each is a service run and a record rewritten per change. */
const MAX_QUEUED = 20;
const QUEUE_FULL = `${MAX_QUEUED} messages are already waiting in this thread, so this one was not queued. Please wait for the runs to finish, then send it again.`;
const NOT_SHOWN =
  "I couldn't post the answer's message in this thread, so your message was not sent. Please try again.";
const QUEUED =
  "A run is still in progress in this thread. Your message is queued and will be sent as soon as it finishes.";

const threadId = (key: SlackThreadKey) => `${key.teamId}/${key.channelId}/${key.threadTs}`;

const startingFor = (replyTs: string, since: number) =>
  ({ kind: "starting", since, replyTs }) as const;

export class FollowUps {
  readonly #deps: CoordinatorDeps;
  /** Threads whose follow-up is being started by this process. */
  readonly #starting = new Set<string>();

  constructor(deps: CoordinatorDeps) {
    this.#deps = deps;
  }

  /** Why a reply would be refused, or undefined (a rate slot is then taken): the Continue form's. */
  async check(reply: Omit<ThreadReply, "ts">): Promise<string | undefined> {
    const record = await this.#deps.store.getThread(reply.key);
    if (!record) return NOTHING_TO_CONTINUE;
    const parsed = parsePrompt(reply.text);
    if (!parsed.ok) return parsed.error;
    return this.#refusal(record, reply, parsed.prompt);
  }

  async #refusal(record: ThreadRecord, reply: Omit<ThreadReply, "ts">, prompt: string) {
    const asker = { ...reply.key, userId: reply.userId };
    try {
      if (prompt !== "") validateTaskInput(prompt, []);
    } catch (err) {
      return describeServiceError(err);
    }
    if (!record.service && record.active.kind === "idle") return NOTHING_TO_CONTINUE;
    return askerRefusal(this.#deps, asker);
  }

  /** A reply in the task thread `record`, told privately in the thread when refused. */
  async handle(record: ThreadRecord, reply: ThreadReply): Promise<void> {
    const { store } = this.#deps;
    const writer = this.#deps.workspaces.writer(reply.key.teamId);
    const { channelId, threadTs } = reply.key;
    const tell = (text: string) => writer.ephemeral(channelId, reply.userId, text, threadTs);
    const parsed = parsePrompt(reply.text);
    if (!parsed.ok) return tell(parsed.error);
    // Files alone continue the task too; an empty message is nothing to send.
    if (parsed.prompt === "" && reply.files.length === 0) return;
    const refusal = reply.checked ? undefined : await this.#refusal(record, reply, parsed.prompt);
    if (refusal !== undefined) return tell(refusal);
    await this.#reconcile(record);
    const ignored = notForFollowUps(parsed.options);
    const item: QueuedFollowUp = {
      userId: reply.userId,
      text: parsed.prompt,
      ts: reply.ts,
      ...(reply.files.length > 0 ? { files: reply.files } : {}),
      ...(ignored.length > 0 ? { ignoredOptions: ignored } : {}),
    };
    const outcome = await this.#enqueue(reply.key, item);
    if (outcome === "full") return tell(QUEUE_FULL);
    if (outcome === "start") return this.#start(reply.key, item);
    await Promise.allSettled([writer.react(channelId, reply.ts, QUEUED_REACTION), tell(QUEUED)]);
    // The run may have ended between the check and the queueing.
    const now = await store.getThread(reply.key);
    if (now && now.active.kind === "idle") await this.#drain(reply.key);
  }

  /** Starts or queues `item` (unless full), decided in the store's update: two instances agree. */
  async #enqueue(key: SlackThreadKey, item: QueuedFollowUp): Promise<"start" | "queued" | "full"> {
    let outcome: "start" | "queued" | "full" = "queued";
    await this.#deps.store.updateThread(key, (rec) => {
      if (rec.active.kind === "idle" && rec.queue.length === 0) {
        outcome = "start";
        return { ...rec, active: startingFor(item.ts, this.#deps.now()) };
      }
      outcome = rec.queue.length >= MAX_QUEUED ? "full" : "queued";
      return outcome === "full" ? undefined : { ...rec, queue: [...rec.queue, item] };
    });
    return outcome;
  }

  /** A run has shown its final state: the thread is free for the next queued reply. */
  async runEnded(outcome: RunOutcome): Promise<void> {
    const runId = outcome.target.runId;
    const record = await this.#deps.store.updateThread(outcome.target.key, (rec) =>
      rec.active.kind === "running" && rec.active.runId === runId
        ? { ...rec, active: IDLE, lastRunId: runId }
        : undefined,
    );
    if (record?.surface === "dm") await clearWorking(this.#deps, outcome.target.key);
    if (record) {
      // The task's owner sees how it ended in their App Home (the queue does not wait for it).
      const { teamId } = outcome.target.key;
      const owner = record.ownerUserId;
      void this.#deps.preferences
        .taskState(teamId, owner, record, outcome.state)
        .then(() => this.#deps.home.taskChanged(teamId, owner));
    }
    await this.#drain(outcome.target.key);
  }

  /** Tells everyone whose reply waits in a thread that it will not be sent, and frees it. */
  async abandon(key: SlackThreadKey, why: string): Promise<void> {
    const { store, logger } = this.#deps;
    const writer = this.#deps.workspaces.writer(key.teamId);
    let dropped: readonly QueuedFollowUp[] = [];
    await store
      .updateThread(key, (rec) => {
        dropped = rec.queue;
        return { ...rec, queue: [], active: IDLE };
      })
      .catch((err: unknown) =>
        logger.warn({ err, teamId: key.teamId }, "could not clear a thread's queue"),
      );
    await Promise.allSettled(
      dropped.map((q) => writer.ephemeral(key.channelId, q.userId, why, key.threadTs)),
    );
  }

  /** Starts the next queued reply, if the thread is idle. */
  async #drain(key: SlackThreadKey): Promise<void> {
    const taken: { item?: QueuedFollowUp } = {};
    await this.#deps.store.updateThread(key, (rec) => {
      const [first, ...rest] = rec.queue;
      if (rec.active.kind !== "idle" || !first || !rec.service) return undefined;
      taken.item = first;
      return { ...rec, queue: rest, active: startingFor(first.ts, this.#deps.now()) };
    });
    const { item } = taken;
    if (!item) return;
    const { workspaces, logger } = this.#deps;
    await workspaces
      .writer(key.teamId)
      .unreact(key.channelId, item.ts, QUEUED_REACTION)
      .catch((err: unknown) =>
        logger.debug({ err, teamId: key.teamId }, "could not remove the queued reaction"),
      );
    await this.#start(key, item);
  }

  /** Continues with `item`: the service is asked at once, the run's message posted meanwhile. */
  async #start(key: SlackThreadKey, item: QueuedFollowUp): Promise<void> {
    const { store, logger } = this.#deps;
    const service = this.#deps.workspaces.service(key.teamId);
    const id = threadId(key);
    this.#starting.add(id);
    const startedAt = this.#deps.now();
    let messageTs: string | undefined;
    let attachments = NO_ATTACHMENTS;
    try {
      const record = await store.getThread(key);
      if (!record) return;
      // A reply reaches here only for a task the service created (its checks say so).
      const ref = record.service;
      if (!ref) throw new Error("the task this reply continues was never created");
      const writer = this.#deps.workspaces.writer(key.teamId);
      const tell = (text: string) =>
        writer.ephemeral(key.channelId, item.userId, text, key.threadTs);
      attachments = await readAttachments(this.#deps, key.teamId, item.files ?? [], tell);
      const files = attachments.files;
      const result = await startRun(this.#deps, {
        place: key,
        plan: openingOf(record, item, startedAt),
        startedAt,
        ask: async () => {
          const input = { prompt: item.text, ...(files.length > 0 ? { files } : {}) };
          const res = await service.continueConversation(ref, input);
          return { ref, runId: serviceRunId(res.agent_run_id) };
        },
        onRunning: () =>
          void this.#deps.preferences.taskState(key.teamId, record.ownerUserId, key, "running"),
        tell,
        notShownAdvice: NOT_SHOWN,
      });
      if (result.kind === "not-shown") throw result.error;
      if (result.kind === "refused") {
        this.#deps.serviceAlerts.refused(key.teamId, result.error);
        messageTs = result.messageTs;
        throw result.error;
      }
      this.#deps.serviceAlerts.accepted(key.teamId);
    } catch (err) {
      logger.warn({ err, teamId: key.teamId }, "starting a follow-up failed");
      const broken = attachments.broken();
      const why = broken ? brokenFileReason(broken) : undefined;
      if (messageTs) await showStartError(this.#deps, key, messageTs, err, startedAt, why);
      await store.updateThread(key, (rec) =>
        rec.active.kind === "starting" && rec.active.replyTs === item.ts
          ? { ...rec, active: IDLE }
          : undefined,
      );
      // Nothing typed is lost: the next queued message still gets its turn.
      await this.#drain(key);
    } finally {
      attachments.release();
      this.#starting.delete(id);
    }
  }

  /**
   * A thread the store says is busy but whose run nobody records as unfinished (the bot crashed
   * before recording it, or while starting a follow-up): free it when the service says nothing runs.
   */
  async #reconcile(record: ThreadRecord): Promise<void> {
    const { active } = record;
    if (active.kind === "idle") return;
    if (active.kind === "starting") {
      const recent = this.#deps.now() - active.since < STARTING_TIMEOUT_MS;
      if (recent || this.#starting.has(threadId(record))) return;
    } else if (await this.#runGoesOn(record, active.runId)) {
      return;
    }
    await this.#deps.store.updateThread(record, (rec) =>
      sameActivity(rec.active, active) ? { ...rec, active: IDLE } : undefined,
    );
  }

  /** Whether a thread's run is relayed, recorded as unfinished, or (per the service) running. */
  async #runGoesOn({ teamId, service: ref }: ThreadRecord, runId: string): Promise<boolean> {
    const { relay, store, workspaces, logger } = this.#deps;
    if (relay.isActive(runId) || (await store.getRun(runId))) return true;
    if (!ref) return false; // no task on the service: nothing can run
    try {
      const now = await workspaces.service(teamId).getTaskResult(ref, { timeout: 0 });
      return now.status === "running" && (now.agent_run_id ?? runId) === runId;
    } catch (err) {
      logger.warn({ err, teamId }, "could not check a thread's leftover run");
      return true;
    }
  }
}

/** What a follow-up's start posts: its run's working message, with what was not sent under it. */
function openingOf(record: ThreadRecord, item: QueuedFollowUp, startedAt: number): RunOpening {
  const names = (item.ignoredOptions ?? []).map((k) => `\`${k}\``).join(", ");
  const remark =
    names &&
    `Not applied to this follow-up: ${names} (the task service takes these only when a task starts; start a new task with \`/task\` to use them).`;
  // A reply keeps the place of its message in line (it may have waited in the queue).
  const sent = Math.round(Number(item.ts) * 1000);
  return {
    userId: item.userId,
    surface: record.surface,
    since: Number.isFinite(sent) && sent > 0 ? Math.min(sent, startedAt) : startedAt,
    replyTs: item.ts,
    ...(remark ? { remark } : {}),
  };
}

/** Whether two records show the same start or run (a leftover is freed only if still there). */
function sameActivity(a: ThreadActivity, b: ThreadActivity): boolean {
  if (a.kind === "running" && b.kind === "running") return a.runId === b.runId;
  if (a.kind === "starting" && b.kind === "starting") {
    return a.since === b.since && a.replyTs === b.replyTs && a.messageTs === b.messageTs;
  }
  return a.kind === b.kind;
}
