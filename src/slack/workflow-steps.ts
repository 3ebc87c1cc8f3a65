/**
 * Workflow Builder steps ("Run a task", manifest.yml's `run_task`): their execution token kept
 * with the run (sealed when the app has an encryption key), and their end when the task ends:
 * `functions.completeSuccess` (the outputs) or `completeError` (why not), with the execution's
 * own token (`function_executed`'s `bot_access_token`, as Bolt's `complete` and `fail` use it),
 * by whichever instance ends the run. A store claim per execution makes that once: an instance
 * that died between ending the step and deleting the run's record leaves a step found ended.
 */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import type { StepResult, WorkflowSteps } from "../runs/ports.ts";
import type { ThreadStore, WorkflowStep } from "../store/types.ts";
import type { Config } from "../config/config.ts";
import { open, type SealingKey, seal, sealingKeys } from "../util/secret-box.ts";
import { slackErrorCode } from "../view/errors.ts";
import { threadLink } from "../view/home.ts";
import { stepError, stepOutputs } from "../view/completion.ts";

/** The step's callback id (manifest.yml `functions.run_task`). */
export const RUN_TASK = "run_task";

/** Where an execution token is sealed: a box copied to another execution does not open. */
const binding = (executionId: string): string => `step:${executionId}#token`;

/** The keys that seal execution tokens at rest: ENCRYPTION_KEY(S), when set. */
export const stepTokenKeys = (config: Pick<Config, "encryptionKeys">): readonly SealingKey[] =>
  config.encryptionKeys.length > 0 ? sealingKeys(config.encryptionKeys) : [];

/** An execution's token as the run's record keeps it: sealed when there are keys. */
export function keptToken(
  executionId: string,
  token: string,
  keys: readonly SealingKey[],
): WorkflowStep {
  return {
    executionId,
    token: keys.length > 0 ? seal(token, keys, binding(executionId)) : token,
  };
}

/** How the listener keeps a step's execution with its task. */
export function stepKeeper(config: Pick<Config, "encryptionKeys">): {
  keep(executionId: string, token: string): WorkflowStep;
} {
  const keys = stepTokenKeys(config);
  return { keep: (executionId, token) => keptToken(executionId, token, keys) };
}

/** Why a completed task's step fails when Slack refuses its outputs. */
export const OUTPUTS_REFUSED =
  "The task completed, but Slack refused its outputs for this step; the answer is in its thread";

/** Slack's answers to an execution that was ended already (or is gone): nothing more to do. */
const ENDED = new Set(["execution_not_in_running_state", "function_execution_not_found"]);

export function slackWorkflowSteps(options: {
  /** A client that waits out rate limits and retries (`patientClient`). */
  readonly client: Pick<WebClient, "functions">;
  readonly store: Pick<ThreadStore, "claimOnce">;
  /** The workspace's URL, for the link to the task's thread. */
  readonly teamUrl: (teamId: string) => Promise<string | undefined>;
  /** The keys that seal tokens at rest (none: tokens are kept as Slack gave them). */
  readonly keys: readonly SealingKey[];
  /** How long an execution's end is remembered: as long as a run can be resumed. */
  readonly claimTtlMs: number;
  readonly logger: Logger;
}): WorkflowSteps {
  const { client, store, logger } = options;
  return {
    async end(teamId: string, step: WorkflowStep, result: StepResult): Promise<void> {
      const log = logger.child({ team: teamId, execution: step.executionId });
      const first = await store
        .claimOnce(teamId, `step:${step.executionId}`, options.claimTtlMs)
        .catch((err: unknown) => {
          // Slack refuses a second end of an execution anyway: better twice than never.
          log.warn({ err }, "could not claim a workflow step's end; ending it anyway");
          return true;
        });
      if (!first) return void log.debug("the workflow step was ended already");
      try {
        const token = tokenOf(step, options.keys);
        const link = result.thread
          ? threadLink(
              await options.teamUrl(teamId),
              result.thread.channelId,
              result.thread.threadTs,
            )
          : undefined;
        const ending = { ...result, link };
        const function_execution_id = step.executionId;
        if (result.state === "completed") {
          const outputs = { ...stepOutputs(ending) };
          await client.functions
            .completeSuccess({ token, function_execution_id, outputs })
            .catch(async (err: unknown) => {
              // Outputs Slack refuses would leave the step running: fail it, saying where.
              if (slackErrorCode(err) !== "invalid_arguments") throw err;
              log.warn("Slack refused a workflow step's outputs; failing the step instead");
              const error = stepError({ ...ending, state: "error", reason: OUTPUTS_REFUSED });
              await client.functions.completeError({ token, function_execution_id, error });
            });
        } else {
          const error = stepError(ending);
          await client.functions.completeError({ token, function_execution_id, error });
        }
        log.info({ state: result.state }, "workflow step ended");
      } catch (err) {
        const code = slackErrorCode(err);
        if (code !== undefined && ENDED.has(code)) {
          return void log.info({ code }, "the workflow step was ended already");
        }
        // Never the token: the error's code and message only.
        const message = err instanceof Error ? err.message : String(err);
        log.error({ code, message }, "could not end a workflow step");
      }
    },
  };
}

/** The execution's token from the run's record. Throws (without the token) when it does not open. */
function tokenOf(step: WorkflowStep, keys: readonly SealingKey[]): string {
  return keys.length > 0 ? open(step.token, keys, binding(step.executionId)) : step.token;
}
