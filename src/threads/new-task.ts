/**
 * A new task: created on the service at once, while its prompt (the thread) and working message
 * are posted as Slack's budget allows, in arrival order; then its first run goes to the relay.
 */
import type { TaskServiceError } from "../service/errors.ts";
import type { UploadFile } from "../service/multipart.ts";
import { type RunOpening, serviceRunId, type SlackThreadKey } from "../store/types.ts";
import { getUsagePolicy } from "../store/usage-policy.ts";
import { blameDefaults } from "../view/defaults.ts";
import { describeServiceError } from "../view/errors.ts";
import { USAGE } from "../view/render.ts";
import { truncate } from "../view/sanitize.ts";
import { type Attachments, brokenFileReason, readAttachments } from "./attachments.ts";
import { startRun, type StartResult } from "../runs/start.ts";
import { toCreateInput } from "./options.ts";
import type { TaskDefaultsUsed } from "./preferences.ts";
import type { NewTask, TellUser } from "./requests.ts";
import type { FollowUps } from "./follow-ups.ts";
import { type WithThread, withThreadContext } from "../thread-context/compose.ts";
import { type CoordinatorDeps, showStartError } from "./coordinator-deps.ts";
import type { Turn } from "../util/lines.ts";

const NOT_POSTED =
  "I couldn't post the task's messages in this channel, so it was not started. Please try again.";
const NOT_STARTED =
  "The task could not be started, so your message was not sent. Start a new one with `/task`.";

export class NewTasks {
  readonly #deps: CoordinatorDeps;
  readonly #followUps: Pick<FollowUps, "abandon">;

  constructor(deps: CoordinatorDeps, followUps: Pick<FollowUps, "abandon">) {
    this.#deps = deps;
    this.#followUps = followUps;
  }

  /** Starts a task whose prompt was checked; failures to post are told to the user. */
  async start(task: NewTask, used: TaskDefaultsUsed, tell: TellUser, turn?: Turn): Promise<void> {
    const attachments = await readAttachments(this.#deps, task.teamId, task.files ?? [], tell);
    if (task.prompt === "" && attachments.files.length === 0) {
      // Every file was left out (and named): there is nothing to send.
      if (attachments.leftOut.length === 0) await tell(USAGE);
      return;
    }
    try {
      await this.#start(task, used, attachments, tell, turn);
    } finally {
      attachments.release();
    }
  }

  async #start(
    task: NewTask,
    used: TaskDefaultsUsed,
    attachments: Attachments,
    tell: TellUser,
    turn: Turn | undefined,
  ): Promise<void> {
    const startedAt = this.#deps.now();
    // The work starts at once (with the thread it was asked in, if any).
    const context = this.#withThread(task, attachments.files);
    const result = await startRun(this.#deps, {
      place: { teamId: task.teamId, channelId: task.channelId, threadTs: task.threadTs },
      plan: openingOf(task, startedAt),
      startedAt,
      ask: async () => {
        await this.#inChannelOrMayJoin(task);
        const { prompt, files } = await context;
        const made = await this.#deps.workspaces.service(task.teamId).createTask({
          prompt,
          ...toCreateInput(used.options),
          ...(files.length > 0 ? { files } : {}),
          metadata: {
            slack: {
              team_id: task.teamId,
              channel_id: task.channelId,
              user_id: task.userId,
              // A command's thread does not exist yet: the work does not wait for Slack.
              ...(task.threadTs === undefined ? {} : { thread_ts: task.threadTs }),
            },
          },
        });
        const ref = { projectId: made.project_id, threadId: made.thread_id };
        return { ref, runId: serviceRunId(made.agent_run_id) };
      },
      remark: () => context.then((c) => c.remark),
      // From now on replies in the thread wait for the run instead of starting their own.
      onThread: (thread) => this.#recordStarting(task, thread, startedAt),
      // Listed in the person's recent tasks meanwhile (the start does not wait for it).
      onShown: (key) =>
        void this.#deps.preferences.taskStarted(task.teamId, task.userId, {
          channelId: task.channelId,
          threadTs: key.threadTs,
          prompt: task.prompt || (task.files ?? []).map((f) => f.name).join(", "),
          startedAt,
          surface: task.surface ?? "channel",
        }),
      tell,
      notShownAdvice: NOT_POSTED,
      ...(turn ? { turn } : {}),
    });
    if (result.kind === "not-shown") {
      if (result.thread) await this.#followUps.abandon(result.thread, NOT_STARTED);
    } else if (result.kind === "refused") {
      this.#deps.serviceAlerts.refused(task.teamId, result.error);
      await this.#failed(task, result, used, attachments, startedAt);
    } else {
      this.#deps.serviceAlerts.accepted(task.teamId);
    }
  }

  /**
   * A task opening its thread in a public channel asks the service only if the app is in it or may
   * join it (`joinPublicChannels`); else this rejects, and the prompt's post (meanwhile) fails and
   * tells how to invite it. When Slack cannot say, the post will.
   */
  async #inChannelOrMayJoin(task: NewTask): Promise<void> {
    const { store, logger, botMembership } = this.#deps;
    if (!botMembership || task.threadTs !== undefined || !task.channelId.startsWith("C")) return;
    const policy = await getUsagePolicy(store, task.teamId).catch(() => undefined);
    if (!policy || policy.joinPublicChannels) return;
    const { teamId, channelId: channel } = task;
    const member = await botMembership(teamId, channel).catch((err: unknown) => {
      logger.warn({ err, teamId, channel }, "could not ask Slack whether I am in a channel");
      return true;
    });
    if (!member) throw new Error("not in the channel, and may not join it");
  }

  /** The prompt and files with the thread a message was posted in (never rejects). */
  #withThread(task: NewTask, files: readonly UploadFile[]): Promise<WithThread> {
    if (task.inThreadTs === undefined || task.threadTs === undefined) {
      return Promise.resolve({ prompt: task.prompt, files });
    }
    const ask = { ...task, threadTs: task.threadTs, beforeTs: task.inThreadTs };
    return withThreadContext(this.#deps, ask, task.prompt, files);
  }

  /** The service refused or failed the create: the run's message says why. */
  async #failed(
    task: NewTask,
    { key, messageTs, error: err }: Extract<StartResult, { kind: "refused" }>,
    used: TaskDefaultsUsed,
    attachments: Attachments,
    startedAt: number,
  ): Promise<void> {
    const { logger, preferences, home } = this.#deps;
    const kind = (err as TaskServiceError).kind;
    logger.warn({ err, kind, teamId: key.teamId }, "creating the task failed");
    const broken = attachments.broken();
    // A refusal that a default may have caused names it, so the person can change it.
    const blamed = blameDefaults(err, used.applied);
    const why = broken
      ? brokenFileReason(broken)
      : blamed && `${describeServiceError(err)} ${blamed}`;
    await showStartError(this.#deps, key, messageTs, err, startedAt, why);
    if (task.step && this.#deps.workflowSteps) {
      const reason = why ?? describeServiceError(err);
      const refused = { state: "error", answer: "", reason, files: [], thread: key } as const;
      await this.#deps.workflowSteps.end(task.teamId, task.step, refused);
    }
    void preferences
      .taskState(task.teamId, task.userId, key, "error")
      .then(() => home.taskChanged(task.teamId, task.userId));
    await this.#followUps.abandon(key, NOT_STARTED);
  }

  /** The thread exists from now on: replies typed while the task is being created queue. */
  async #recordStarting(task: NewTask, key: SlackThreadKey, startedAt: number): Promise<void> {
    await this.#deps.store
      .putThread({
        ...key,
        ownerUserId: task.userId,
        surface: task.surface ?? "channel",
        active: { kind: "starting", since: startedAt },
        lastRunId: undefined,
        queue: [],
        createdAt: startedAt,
        updatedAt: startedAt,
      })
      .catch((err: unknown) =>
        this.#deps.logger.warn({ err, teamId: key.teamId }, "could not record the new thread"),
      );
  }
}

/** What the new task's start posts: its prompt (for a command), its working message. */
function openingOf(task: NewTask, startedAt: number): RunOpening {
  const names = (task.files ?? []).map((f) => f.name || f.id);
  return {
    userId: task.userId,
    surface: task.surface ?? "channel",
    since: task.receivedAt ?? startedAt,
    ...(task.threadTs === undefined ? { prompt: { text: task.prompt, fileNames: names } } : {}),
    ...(task.surface === "dm" ? { title: sessionTitle(task) } : {}),
    ...(task.step ? { step: task.step } : {}),
  };
}

/** A new agent session's title: the prompt's first line (or its files), as Slack lists it. */
function sessionTitle(task: NewTask): string {
  const line = task.prompt.trim().split("\n")[0]?.trim();
  const title = line || (task.files ?? []).map((f) => f.name).join(", ");
  return truncate(title, 200); // never inside an emoji
}
