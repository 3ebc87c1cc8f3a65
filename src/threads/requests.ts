/** The requests the coordinator takes from any Slack surface, and their own checks. */
import { LIMITS, promptLength } from "../service/limits.ts";
import {
  type SlackFileRef,
  type SlackThreadKey,
  StoreUnavailableError,
  type WorkflowStep,
} from "../store/types.ts";
import { describeServiceError } from "../view/errors.ts";
import { USAGE } from "../view/render.ts";
import { parsePrompt, type TaskOptions } from "./options.ts";
import type { ThreadStore } from "./ports.ts";

/** Tells the person who acted, privately. */
export type TellUser = (text: string) => Promise<void>;

/**
 * One delivery of a request, handled once: a retried command carries the same trigger id, an event
 * the same event id; a message (channel and ts) counts once though Slack delivers a mention of the
 * bot both as `app_mention` and as `message` (different event ids).
 */
export type Delivery = { readonly kind: "trigger" | "event" | "message"; readonly id: string };

export interface NewTask {
  readonly teamId: string;
  readonly channelId: string;
  readonly userId: string;
  /** As the person typed it (Slack's escapes already decoded), inline options included. */
  readonly prompt: string;
  readonly delivery?: Delivery | undefined;
  /** The thread a message (mention, DM) is answered in; none: the prompt is posted as its root. */
  readonly threadTs?: string | undefined;
  readonly surface?: "channel" | "dm" | undefined;
  /** Options chosen outside the prompt (the modal's fields); inline ones win. */
  readonly options?: TaskOptions | undefined;
  readonly files?: readonly SlackFileRef[] | undefined;
  /** When the request arrived (ms since the epoch): its messages keep that place in line. */
  readonly receivedAt?: number | undefined;
  /** A message inside a thread without a task (its ts): the earlier messages go with it. */
  readonly inThreadTs?: string | undefined;
  /** A Workflow Builder step asked for it: the step ends when its run ends (or is refused). */
  readonly step?: WorkflowStep | undefined;
}

export interface ThreadReply {
  readonly key: SlackThreadKey;
  readonly userId: string;
  readonly text: string;
  readonly ts: string;
  readonly files: readonly SlackFileRef[];
  readonly delivery?: Delivery | undefined;
  /** The Continue form made the checks (people, usage, rate) before posting it: not again. */
  readonly checked?: boolean;
}

/** A person's message the bot heard (a mention, a DM, a reply in a thread), its text as typed. */
export type IncomingMessage = Pick<NewTask, "teamId" | "channelId" | "userId" | "threadTs"> &
  Pick<ThreadReply, "text" | "ts" | "files"> & {
    /** Whether it starts a task when it is not in a task thread (mentions, DMs). */
    readonly startsTask: boolean;
    readonly surface: "channel" | "dm";
  };

/** Stop pressed on a run in Slack (its button, or Slack's own in the agent view). */
export type StopPress = Pick<ThreadReply, "key" | "userId"> & { readonly runId: string };

/** A Workflow Builder step's execution ("Run a task"), as its inputs said. */
export interface StepRequest {
  readonly teamId: string;
  readonly step: WorkflowStep;
  readonly prompt: string;
  /** Where the task's thread goes; none: the requester's DM with the app. */
  readonly channelId?: string | undefined;
  /** Whose task it is (their policies, usage and defaults); none: the step fails, saying why. */
  readonly requester?: string | undefined;
  /** The options the step's inputs chose (inline ones in the prompt win). */
  readonly options: TaskOptions;
}

/** A new task's inline options and prompt, or why it is refused (a bad option, a bad prompt). */
export function checkTaskText(
  text: string,
  hasFiles = false,
): { readonly prompt: string; readonly options: TaskOptions } | { readonly refusal: string } {
  const parsed = parsePrompt(text);
  if (!parsed.ok) return { refusal: parsed.error };
  // Files alone are a request too: the service needs a prompt only when none are attached.
  if (parsed.prompt === "" && !hasFiles) return { refusal: USAGE };
  const length = promptLength(parsed.prompt);
  if (length <= LIMITS.promptMaxChars) return parsed;
  return {
    refusal: `Your prompt is ${length.toLocaleString("en-US")} characters long; the task service accepts at most ${LIMITS.promptMaxChars.toLocaleString("en-US")}. Please shorten it and try again.`,
  };
}

/** How long a delivery is remembered: well past Slack's last retry of either. */
const CLAIMS = {
  trigger: { prefix: "cmd", ttlMs: 3_600_000 },
  event: { prefix: "event", ttlMs: 24 * 3_600_000 },
  message: { prefix: "msg", ttlMs: 24 * 3_600_000 },
} as const;

/** True for the first delivery of a request (and for a request without an id). */
export function claimDelivery(
  store: Pick<ThreadStore, "claimOnce">,
  teamId: string,
  delivery: Delivery | undefined,
): Promise<boolean> {
  if (!delivery) return Promise.resolve(true);
  const { prefix, ttlMs } = CLAIMS[delivery.kind];
  return store.claimOnce(teamId, `${prefix}:${delivery.id}`, ttlMs);
}

export function describeFailure(err: unknown): string {
  return err instanceof StoreUnavailableError
    ? "The app is temporarily unavailable (its storage is not answering). Nothing was started; please try again in a minute."
    : describeServiceError(err);
}
