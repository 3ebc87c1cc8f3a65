/**
 * A Workflow Builder step ("Run a task"): a new task like any other (the requester's policies and
 * limits apply), in the step's channel or the requester's DM with the app. A refusal fails the
 * step with the reason; otherwise the step ends when the task's run ends (runs/run.ts).
 */
import type { WorkflowStep } from "../store/types.ts";
import type { TaskOptions } from "./options.ts";
import type { NewTask, TellUser } from "./requests.ts";
import type { CoordinatorDeps } from "./coordinator-deps.ts";

/** What a step's execution asks for, as its inputs said. */
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

const NO_REQUESTER =
  'This step needs a Requester: set it to the person whose task it is (for example "Person who used this workflow"). Their policies and usage limits apply to the task.';

/** Starts the step's task; whatever refuses it fails the step with the reason. */
export async function runStep(
  deps: Pick<CoordinatorDeps, "directMessages" | "logger">,
  request: StepRequest,
  start: (task: NewTask, tell: TellUser) => Promise<void>,
  fail: TellUser,
): Promise<void> {
  const { teamId, step, requester: userId } = request;
  if (!userId) return fail(NO_REQUESTER);
  const channelId =
    request.channelId ??
    (await deps.directMessages?.(teamId, userId).catch((err: unknown) => {
      deps.logger.warn(
        { err, user: userId },
        "could not open a direct message for a workflow step",
      );
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
  await start(task, fail);
}
