/**
 * A Workflow Builder step ("Run a task"): a new task like any other, asked for by a workflow
 * instead of a person typing. Its thread goes in the step's channel, or in the requester's DM
 * with the app; the requester's policies and usage limits apply (the check chain, as for every
 * new task). A refusal fails the step with the reason; otherwise the step ends when the task's
 * run ends (runs/run.ts), whichever instance ends it.
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

/** Why a step without a requester fails: someone's policies and limits must apply. */
export const NO_REQUESTER =
  'This step needs a Requester: set it to the person whose task it is (for example "Person who used this workflow"). Their policies and usage limits apply to the task.';

/** Starts the step's task; whatever refuses it fails the step with the reason. */
export async function runStep(
  deps: Pick<CoordinatorDeps, "workflowSteps" | "directMessages" | "logger">,
  request: StepRequest,
  start: (task: NewTask, tell: TellUser) => Promise<void>,
): Promise<void> {
  const { teamId, step } = request;
  const fail: TellUser = (reason) =>
    deps.workflowSteps
      ? deps.workflowSteps.end(teamId, step, { state: "error", answer: "", reason, files: [] })
      : Promise.resolve();
  const userId = request.requester;
  if (!userId) return fail(NO_REQUESTER);
  const channelId = request.channelId ?? (await directMessage(deps, teamId, userId));
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

async function directMessage(
  deps: Pick<CoordinatorDeps, "directMessages" | "logger">,
  teamId: string,
  userId: string,
): Promise<string | undefined> {
  if (!deps.directMessages) return undefined;
  return deps.directMessages(teamId, userId).catch((err: unknown) => {
    deps.logger.warn({ err, user: userId }, "could not open a direct message for a workflow step");
    return undefined;
  });
}
