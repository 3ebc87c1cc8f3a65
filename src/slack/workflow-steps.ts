/**
 * Workflow Builder's "Run a task" step: its token (`function_executed`'s `bot_access_token`, as
 * Bolt's `complete` and `fail` use it) kept sealed with the run, and its end, once per execution.
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

/** ENCRYPTION_KEY(S) when set; none: tokens are kept as Slack gave them. */
export const stepTokenKeys = (config: Pick<Config, "encryptionKeys">): readonly SealingKey[] =>
  config.encryptionKeys.length > 0 ? sealingKeys(config.encryptionKeys) : [];

export const stepKeeper = (keys: readonly SealingKey[]) => ({
  keep: (executionId: string, token: string): WorkflowStep => ({
    executionId,
    token: keys.length > 0 ? seal(token, keys, binding(executionId)) : token,
  }),
});

export const OUTPUTS_REFUSED =
  "The task completed, but Slack refused its outputs for this step; the answer is in its thread";

/** Slack's answers to an execution that was ended already (or is gone): nothing more to do. */
const ENDED = new Set(["execution_not_in_running_state", "function_execution_not_found"]);

export function slackWorkflowSteps(options: {
  /** `patientClient`: waits out rate limits. */
  readonly client: Pick<WebClient, "functions">;
  readonly store: Pick<ThreadStore, "claimOnce">;
  readonly teamUrl: (teamId: string) => Promise<string | undefined>;
  readonly keys: readonly SealingKey[];
  /** As long as a run can be resumed. */
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
        const { thread } = result;
        const link =
          thread && threadLink(await options.teamUrl(teamId), thread.channelId, thread.threadTs);
        const ending = { ...result, link };
        const execution = { token, function_execution_id: step.executionId };
        const fail = (error: string) => client.functions.completeError({ ...execution, error });
        if (result.state !== "completed") await fail(stepError(ending));
        else
          await client.functions
            .completeSuccess({ ...execution, outputs: { ...stepOutputs(ending) } })
            .catch(async (err: unknown) => {
              // Outputs Slack refuses would leave the step running: fail it, saying where.
              if (slackErrorCode(err) !== "invalid_arguments") throw err;
              log.warn("Slack refused a workflow step's outputs; failing the step instead");
              await fail(stepError({ ...ending, state: "error", reason: OUTPUTS_REFUSED }));
            });
        log.info({ state: result.state }, "workflow step ended");
      } catch (err) {
        const code = slackErrorCode(err);
        if (ENDED.has(code ?? ""))
          return void log.info({ code }, "the workflow step was ended already");
        // Never the token: the error's code and message only.
        const message = err instanceof Error ? err.message : String(err);
        log.error({ code, message }, "could not end a workflow step");
      }
    },
  };
}

/** Throws (without the token) when it does not open. */
function tokenOf(step: WorkflowStep, keys: readonly SealingKey[]): string {
  return keys.length > 0 ? open(step.token, keys, binding(step.executionId)) : step.token;
}
