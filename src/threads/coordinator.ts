/** The listeners' one entry point: checks a request's prompt and delivery, hands it to its part. */
import { once } from "node:events";
import type { WorkflowStep } from "../store/types.ts";
import { FollowUps } from "./follow-ups.ts";
import { forgetting } from "./forgetting.ts";
import { mergeOptions } from "./options.ts";
import { askerRefusal } from "./access/checks.ts";
import { NewTasks } from "./new-task.ts";
import { runningThreads } from "./running.ts";
import { Preferences } from "./preferences.ts";
import type { RunOutcome } from "../runs/relay.ts";
import {
  checkTaskText,
  claimDelivery,
  type Delivery,
  describeFailure,
  type IncomingMessage,
  type NewTask,
  type StepRequest,
  type StopPress,
  type TellUser,
  type ThreadReply,
} from "./requests.ts";
import { stopRun, stopWhenStarted } from "./stop.ts";
import { ThreadViews } from "./thread-views.ts";
import { storedServiceAlerts } from "./access/usage-policy.ts";
import type { CoordinatorDeps } from "./coordinator-deps.ts";
import { lines } from "../util/lines.ts";

export type { TellUser } from "./requests.ts";

/** Dependencies the coordinator makes itself when not given. */
type Defaulted = "limits" | "people" | "now" | "preferences" | "home";

export type CoordinatorOptions = Omit<CoordinatorDeps, Defaulted | "threads" | "serviceAlerts"> &
  Partial<Pick<CoordinatorDeps, Defaulted>>;

/** How long a new task's prompt waits for the prompts of the channel's earlier tasks. */
const TURN_WAIT_MS = 3000;

const NO_REQUESTER =
  'This step needs a Requester: set it to the person whose task it is (for example "Person who used this workflow"). Their policies and usage limits apply to the task.';

export class TaskCoordinator {
  readonly preferences: Preferences;
  readonly #deps: CoordinatorDeps;
  readonly #newTasks: NewTasks;
  readonly #followUps: FollowUps;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #joinLine = lines(TURN_WAIT_MS);
  readonly threads: ThreadViews;
  readonly forgetting: ReturnType<typeof forgetting>;

  constructor(options: CoordinatorOptions) {
    const now = options.now ?? Date.now;
    this.preferences = options.preferences ?? new Preferences({ ...options, now });
    this.#deps = {
      ...options,
      limits: options.limits ?? { perUserPerMinute: 0, perChannelPerMinute: 0 },
      people: options.people ?? { allowGuests: false, allowExternal: false }, // members only
      now,
      preferences: this.preferences,
      home: options.home ?? { taskChanged: () => undefined },
      serviceAlerts: storedServiceAlerts({ ...options, now }),
      threads: runningThreads({ store: options.store, now }),
    };
    this.#followUps = new FollowUps(this.#deps);
    this.#newTasks = new NewTasks(this.#deps, this.#followUps);
    this.threads = new ThreadViews(this.#deps, {
      reply: (reply) => this.handleReply(reply),
      check: (reply) => this.#followUps.check(reply),
    });
    this.forgetting = forgetting(this.#deps);
    // The end of every run reaches the thread it answered (its queue, its state).
    options.relay.onEnded((outcome) => this.onRunEnded(outcome));
  }

  /** Why a new task's prompt would be refused, for a slash command's acknowledgement. */
  refuseNewTask(prompt: string, hasFiles = false): string | undefined {
    const checked = checkTaskText(prompt, hasFiles);
    return "refusal" in checked ? checked.refusal : undefined;
  }

  /** Shutdown: waits for the requests being handled, at most `timeoutMs` (records keep the rest). */
  async settle(timeoutMs: number): Promise<void> {
    const late = AbortSignal.timeout(timeoutMs); // its timer keeps no process alive
    const lateness = once(late, "abort");
    while (this.#inFlight.size > 0 && !late.aborted) {
      await Promise.race([Promise.allSettled([...this.#inFlight]), lateness]);
    }
  }

  #tracked<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  /** A new task, once the request was acknowledged; a retried delivery is ignored. */
  startTask(request: NewTask, tell: TellUser): Promise<void> {
    return this.#tracked(this.#startTask(request, tell));
  }

  async #startTask(request: NewTask, tell: TellUser): Promise<void> {
    // First come, first served: the task keeps the place of its arrival, whatever its checks
    // take (store round trips, files), and its prompt goes after the channel's earlier ones.
    const task = { ...request, receivedAt: request.receivedAt ?? this.#deps.now() };
    const { teamId, userId, channelId } = task;
    const turn = task.threadTs === undefined ? this.#joinLine(`${teamId}:${channelId}`) : undefined;
    // Refused or failed, it posts nothing: the next one need not wait for the telling.
    const refuse: TellUser = (text) => (turn?.leave(), tell(text));
    const checked = checkTaskText(task.prompt, (task.files?.length ?? 0) > 0);
    if ("refusal" in checked) return refuse(checked.refusal);
    await this.#orTell(teamId, "starting a task failed", refuse, async () => {
      if (!(await claimDelivery(this.#deps.store, teamId, task.delivery))) return;
      const limited = await askerRefusal(this.#deps, task);
      if (limited !== undefined) return refuse(limited);
      // Inline options win over a form's, which win over the person's and the channel's defaults.
      const explicit = mergeOptions(checked.options, task.options);
      const used = await this.preferences.forTask(teamId, userId, channelId, explicit);
      await this.#newTasks.start({ ...task, prompt: checked.prompt }, used, tell, turn);
    }).finally(() => turn?.leave());
  }

  /** Does `work`; a failure is logged (as `what`) and told to the person. */
  async #orTell(teamId: string, what: string, tell: TellUser, work: () => Promise<void>) {
    try {
      await work();
    } catch (err) {
      this.#deps.logger.error({ err, teamId }, what);
      await tell(describeFailure(err)).catch(() => undefined);
    }
  }

  /** A Workflow Builder step: its requester's task (their policies apply), in its channel or DM. */
  runStep(request: StepRequest): Promise<void> {
    return this.#tracked(this.#runStep(request));
  }

  async #runStep({ teamId, step, requester: userId, ...request }: StepRequest): Promise<void> {
    const fail = (reason: string) => this.failStep(teamId, step, reason);
    if (request.prompt.trim() === "") {
      return fail("The step's Prompt is empty: set it to what the task should do.");
    }
    if (!userId) return fail(NO_REQUESTER);
    const { directMessages, logger } = this.#deps;
    const channelId =
      request.channelId ??
      (await directMessages?.(teamId, userId).catch((err: unknown) => {
        logger.warn({ err, user: userId }, "could not open a direct message for a workflow step");
        return undefined;
      }));
    if (channelId === undefined) {
      return fail(
        `I couldn't open a direct message with <@${userId}>. Choose a Channel for the step, or try again.`,
      );
    }
    const task: NewTask = {
      teamId,
      channelId,
      userId,
      prompt: request.prompt,
      // Slack sends an execution again when it was not acknowledged: it starts one task.
      delivery: { kind: "event", id: `step:${step.executionId}` },
      options: request.options,
      surface: channelId.startsWith("D") ? "dm" : "channel",
      step,
    };
    await this.#startTask(task, fail);
  }

  /** A Workflow Builder step that cannot start a task: it fails with the reason. */
  async failStep(teamId: string, step: WorkflowStep, reason: string): Promise<void> {
    const failed = { state: "error", answer: "", reason, files: [] } as const;
    await this.#deps.workflowSteps?.end(teamId, step, failed);
  }

  /** A message in a thread (refusals told privately); false, delivery unclaimed, if no task's. */
  handleReply(reply: ThreadReply): Promise<boolean> {
    return this.#tracked(this.#handleReply(reply));
  }

  async #handleReply(reply: ThreadReply): Promise<boolean> {
    const { store, logger } = this.#deps;
    const writer = this.#deps.workspaces.writer(reply.key.teamId);
    try {
      const record = await store.getThread(reply.key);
      if (!record) return false;
      if (!(await claimDelivery(store, reply.key.teamId, reply.delivery))) return true;
      await this.#followUps.handle(record, reply);
    } catch (err) {
      logger.error({ err, teamId: reply.key.teamId }, "handling a thread reply failed");
      const text = `Your message could not be handled: ${describeFailure(err)}`;
      const { channelId, threadTs } = reply.key;
      await writer.ephemeral(channelId, reply.userId, text, threadTs).catch(() => undefined);
    }
    return true;
  }

  /**
   * A message the bot heard: a reply in a task thread continues it; a mention or a DM elsewhere
   * starts a task in a thread under it (or the thread it is in). A mention counts once (Delivery).
   */
  async handleMessage(msg: IncomingMessage): Promise<void> {
    const delivery: Delivery = { kind: "message", id: `${msg.channelId}:${msg.ts}` };
    const inThread = msg.threadTs !== undefined && msg.threadTs !== msg.ts;
    if (inThread) {
      const key = { teamId: msg.teamId, channelId: msg.channelId, threadTs: msg.threadTs };
      const reply = { key, userId: msg.userId, text: msg.text, ts: msg.ts };
      if (await this.handleReply({ ...reply, files: msg.files, delivery })) return;
    }
    if (!msg.startsTask) return;
    const threadTs = msg.threadTs ?? msg.ts;
    const writer = this.#deps.workspaces.writer(msg.teamId);
    // Told where the message was written: Slack shows an ephemeral in a thread only when the
    // thread already has replies (chat.postEphemeral's `thread_ts`), which a new one has not.
    const tell: TellUser = (text) =>
      writer.ephemeral(msg.channelId, msg.userId, text, msg.threadTs);
    await this.startTask(
      {
        teamId: msg.teamId,
        channelId: msg.channelId,
        userId: msg.userId,
        prompt: msg.text,
        delivery,
        threadTs,
        surface: msg.surface,
        files: msg.files,
        ...(inThread ? { inThreadTs: msg.ts } : {}),
      },
      tell,
    );
  }

  /** Slack's own Stop in the agent view (`agent_session_stopped`): like the Stop button. */
  handleSessionStopped(stop: Omit<StopPress, "runId">, tell: TellUser): Promise<void> {
    return this.#orTell(stop.key.teamId, "stopping a session failed", tell, async () => {
      const record = await this.#deps.store.getThread(stop.key);
      if (record?.active.kind === "starting")
        return stopWhenStarted(this.#deps, record, stop, tell);
      if (record?.active.kind !== "running") return; // nothing runs: nothing to stop
      await this.handleStop({ ...stop, runId: record.active.runId }, tell);
    });
  }

  handleStop(req: StopPress, tell: TellUser): Promise<void> {
    return this.#orTell(req.key.teamId, "stop failed", tell, () => stopRun(this.#deps, req, tell));
  }

  /** A run has shown its final state (the relay's `onEnded`, subscribed at construction). */
  onRunEnded(outcome: RunOutcome): Promise<void> {
    return this.#tracked(this.#followUps.runEnded(outcome));
  }
}
