/**
 * The one way a run starts (a new task, a reply in its thread, a start another instance left);
 * what differs between origins is data (`StartRequest`). ARCHITECTURE.md, "One start path".
 */
import type { Logger } from "pino";
import type { ReservationId, RunOpening, SlackThreadKey, StartPlace } from "../store/types.ts";
import type { RunningThreads, SlackWriter, Workspaces } from "./ports.ts";
import { describeSlackPostError, slackErrorCode, stopFailed } from "../view/errors.ts";
import { type MessagePayload, renderPrompt, renderRun } from "../view/render.ts";
import { showWorking } from "./agent-status.ts";
import { relayedRecord, type RunTarget, type StartProgress } from "./record.ts";
import { currentTraceparent } from "../tracing/spans.ts";
import type { Turn } from "../util/lines.ts";

type CreatedRun = NonNullable<StartProgress["created"]>;

/** What a start needs of the relay. */
export interface StartRelay {
  reserve(place: StartPlace, startedAt: number, opening: RunOpening): Promise<ReservationId>;
  progress(id: ReservationId, change: StartProgress): Promise<void>;
  release(id: ReservationId): Promise<void>;
  start(target: RunTarget): Promise<void>;
  stop(run: Pick<RunTarget, "runId" | "ref" | "key">, userId: string): Promise<boolean>;
}

export interface StartDeps {
  readonly relay: StartRelay;
  readonly workspaces: Workspaces;
  readonly threads: RunningThreads;
  readonly logger: Logger;
}

export type ReservedStartDeps = Omit<StartDeps, "relay"> & {
  readonly relay: Pick<StartRelay, "progress" | "start" | "stop">;
};

/** What asks for a run, and its policy where starts differ. */
export interface StartRequest {
  readonly place: OpeningPlace;
  readonly plan: RunOpening;
  readonly startedAt: number;
  /** Creates the task, or continues its conversation. */
  readonly ask: () => Promise<CreatedRun>;
  /** The remark shown under the answer, once the service was asked (default: the plan's). */
  readonly remark?: () => Promise<string | undefined>;
  /** The thread is known: the one asked in (before anything is posted), or the prompt's. */
  readonly onThread?: (key: SlackThreadKey) => Promise<void>;
  /** The run's messages are posted, whatever the service answered. */
  readonly onShown?: (key: SlackThreadKey) => void;
  /** The thread records the run as running; the relay follows it next. */
  readonly onRunning?: (key: SlackThreadKey) => void;
  /** Tells the person who asked, privately. */
  readonly tell: (text: string) => Promise<void>;
  /** Told when the run's messages could not be posted, unless Slack said why. */
  readonly notShownAdvice?: string;
  /** A new task's place in its channel's line: its prompt waits for it, then leaves it. */
  readonly turn?: Turn;
}

type Shown = { readonly key: SlackThreadKey; readonly messageTs: string };

/** How a start ended: relayed, or why not. */
export type StartResult =
  | (Shown & { readonly kind: "started"; readonly run: CreatedRun })
  /** Nothing shows the run: the person was told, and the service's run (if any) stopped. */
  | { readonly kind: "not-shown"; readonly error: unknown; readonly thread?: SlackThreadKey }
  /** The run's message exists but the service refused or failed: the caller shows why. */
  | (Shown & { readonly kind: "refused"; readonly error: unknown });

/** Starts a run; never leaves its reservation behind. */
export async function startRun(given: StartDeps, req: StartRequest): Promise<StartResult> {
  const { teamId, channelId, threadTs } = req.place;
  const deps = { ...given, logger: given.logger.child({ teamId, channel: channelId }) };
  const { relay, logger } = deps;
  // Recorded first: should this instance die from now on, another one finishes the start.
  const reservation = await relay
    .reserve({ teamId, channelId, threadTs }, req.startedAt, req.plan)
    .catch((err: unknown) => void logger.warn({ err }, "could not record a run being started"));
  try {
    return await startReserved(deps, req, reservation);
  } finally {
    if (reservation !== undefined) await relay.release(reservation).catch(() => undefined);
  }
}

/** A start's steps once reserved (each recorded in `reservation`); the caller releases it. */
export async function startReserved(
  deps: ReservedStartDeps,
  req: StartRequest,
  reservation: ReservationId | undefined,
): Promise<StartResult> {
  const { relay, logger } = deps;
  const progress = (change: StartProgress): Promise<void> =>
    reservation === undefined
      ? Promise.resolve()
      : relay.progress(reservation, change).catch((err: unknown) => {
          logger.warn({ err }, "could not record a start");
        });
  const asking = req.ask().then(async (run) => {
    await progress({ created: run });
    return run;
  });
  // The thread: the one asked in, or the one the first post (the prompt) made.
  let thread: SlackThreadKey | undefined;
  const known = async (threadTs: string) => {
    if (thread) return;
    thread = key(req, threadTs);
    await req.onThread?.(thread);
  };
  // A thread that exists is known before anything shows in it: a Stop pressed on the working
  // message (or Slack's own, in the agent view) then finds the run starting.
  const opening = (
    req.place.threadTs === undefined ? Promise.resolve() : known(req.place.threadTs)
  ).then(() =>
    openRun(deps, req, async (p) => {
      await known(p.threadTs);
      await progress(p);
    }),
  );
  const [opened, asked] = await Promise.allSettled([opening, asking]);
  if (opened.status === "rejected") {
    await notShown(deps, req, opened.reason, asked);
    return { kind: "not-shown", error: opened.reason, ...(thread ? { thread } : {}) };
  }
  const { messageTs } = opened.value;
  const at = key(req, opened.value.threadTs);
  req.onShown?.(at);
  if (asked.status === "rejected") {
    return { kind: "refused", key: at, messageTs, error: asked.reason };
  }
  const run = asked.value;
  const remark = req.remark ? await req.remark() : req.plan.remark;
  const traceparent = currentTraceparent();
  const target: RunTarget = {
    key: at,
    ref: run.ref,
    runId: run.runId,
    messageTs,
    startedAt: req.startedAt,
    owner: req.plan.userId,
    ...(remark ? { remark } : {}),
    ...(req.plan.step ? { step: req.plan.step } : {}),
    ...(traceparent ? { traceparent } : {}),
  };
  const stop = await deps.threads
    .running(relayedRecord(target), req.plan)
    .catch((err: unknown) => void deps.logger.error({ err }, "could not record the thread's run"));
  req.onRunning?.(at);
  await deps.relay.start(target);
  if (stop !== undefined) stopAsked(deps, at, run, stop.userId);
  return { kind: "started", key: at, messageTs, run };
}

const key = (req: StartRequest, threadTs: string): SlackThreadKey => ({
  teamId: req.place.teamId,
  channelId: req.place.channelId,
  threadTs,
});

/** The run's messages could not be posted: say why, and stop the run nobody can see. */
async function notShown(
  deps: ReservedStartDeps,
  req: StartRequest,
  err: unknown,
  asked: PromiseSettledResult<CreatedRun>,
): Promise<void> {
  const { logger } = deps;
  if (!(err instanceof PromptNotPosted)) logger.warn({ err }, "could not show a run's start");
  const advice = err instanceof PromptNotPosted ? err.advice : req.notShownAdvice;
  if (advice !== undefined) {
    await req.tell(advice).catch((e: unknown) => logger.debug({ err: e }, "could not tell why"));
  }
  if (asked.status === "fulfilled") {
    await deps.workspaces
      .service(req.place.teamId)
      .stopAgent(asked.value.ref)
      .catch((e: unknown) => logger.warn({ err: e }, "could not stop a run nobody sees"));
  }
}

/** Stop was pressed while the run was starting: it is stopped now (or they are told why not). */
function stopAsked(
  deps: Pick<ReservedStartDeps, "relay" | "workspaces" | "logger">,
  key: SlackThreadKey,
  run: CreatedRun,
  userId: string,
): void {
  void deps.relay.stop({ ...run, key }, userId).catch(async (err: unknown) => {
    deps.logger.warn(
      { err, runId: run.runId },
      "stopping a run asked to stop while starting failed",
    );
    await deps.workspaces
      .writer(key.teamId)
      .ephemeral(key.channelId, userId, stopFailed(err, run.runId), key.threadTs)
      .catch(() => undefined);
  });
}

/** What exists already: the thread (a reply, a mention, a DM), maybe the run's message. */
interface OpeningPlace extends StartPlace {
  readonly messageTs?: string | undefined;
}

/** The prompt could not be posted: nothing shows the task, and the person is told why. */
class PromptNotPosted extends Error {
  readonly advice: string;

  constructor(code: string, advice: string, cause: unknown) {
    super(`could not post the prompt: ${code || "error"}`, { cause });
    this.name = "PromptNotPosted";
    this.advice = advice;
  }
}

/** The message a run shows until its first text arrives. */
function workingMessage(remark?: string): MessagePayload {
  const [first] = renderRun({
    text: "",
    state: "running",
    elapsedMs: 0,
    ...(remark ? { remark } : {}),
  });
  return first ?? { text: "Working…", blocks: [] };
}

/**
 * Posts what `place` lacks of the run's messages (a new task's prompt, the thread's parent, and
 * the "working…" one), telling `progress` after each post. Rejects with PromptNotPosted when the
 * prompt cannot be posted, or with Slack's error when the working message cannot.
 */
async function openRun(
  deps: Pick<StartDeps, "workspaces" | "logger">,
  { place, plan, turn }: Pick<StartRequest, "place" | "plan" | "turn">,
  progress: (opened: { threadTs: string; messageTs?: string }) => Promise<void>,
): Promise<{ readonly threadTs: string; readonly messageTs: string }> {
  const order = { since: plan.since };
  const writer = deps.workspaces.writer(place.teamId);
  let threadTs = place.threadTs;
  if (threadTs === undefined) {
    threadTs = await postPrompt(writer, deps.logger, place.channelId, plan, turn);
    await progress({ threadTs });
  }
  let messageTs = place.messageTs;
  if (messageTs === undefined) {
    messageTs = await writer.post(place.channelId, workingMessage(plan.remark), threadTs, order);
    await progress({ threadTs, messageTs });
    if (plan.surface === "dm") {
      const key = { teamId: place.teamId, channelId: place.channelId, threadTs };
      await showWorking(deps, key, plan.title);
    }
  }
  return { threadTs, messageTs };
}

/**
 * Posts the prompt; its ts is the thread's. Posting first matters: without `chat:write.public`
 * (not in the manifest, on purpose) a post that succeeds proves the bot is a member and will
 * hear replies. Only when it is not in a public channel does it join and post again.
 */
async function postPrompt(
  writer: SlackWriter,
  logger: Logger,
  channelId: string,
  plan: RunOpening,
  turn: Turn | undefined,
): Promise<string> {
  const payload = renderPrompt(plan.userId, plan.prompt?.text ?? "", plan.prompt?.fileNames);
  const order = { since: plan.since };
  await turn?.ready;
  const posting = writer.post(channelId, payload, undefined, order);
  turn?.leave(); // queued (in `since` order): the next task's prompt may queue behind it
  try {
    return await posting.catch(async (err: unknown) => {
      if (slackErrorCode(err) !== "not_in_channel" || !channelId.startsWith("C")) throw err;
      if (!(await writer.join(channelId))) throw err;
      return writer.post(channelId, payload, undefined, order);
    });
  } catch (err) {
    const code = slackErrorCode(err) ?? "";
    logger.warn({ err, code, channel: channelId }, "cannot post the task in the channel");
    const advice =
      describeSlackPostError(code, channelId) ??
      `I couldn't post in this channel (Slack said \`${code || "error"}\`). Please try again.`;
    throw new PromptNotPosted(code, advice, err);
  }
}
