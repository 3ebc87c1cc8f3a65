/**
 * The Workflow Builder step "Run a task" (manifest.yml's `run_task`): a task for the step's
 * requester, in the step's channel or their DM with the app. The step ends when its task ends,
 * on whichever instance ends it (slack/workflow-steps.ts), not here with Bolt's `complete`/`fail`.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { RUN_TASK } from "../workflow-steps.ts";
import { authorisedTeam, type ListenerDeps } from "./surface.ts";

const Execution = z.object({
  function_execution_id: z.string().min(1),
  bot_access_token: z.string().min(1),
  inputs: z.record(z.string(), z.unknown()).default({}),
});

/** An input Workflow Builder left empty arrives as "" (or not at all). */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === "" || v === null ? undefined : v), schema.optional());

const Inputs = z.object({
  prompt: z.string().default(""),
  channel: optional(z.string().regex(/^[CDG][A-Z0-9]+$/, "is not a channel id")),
  requester: optional(z.string().regex(/^[UW][A-Z0-9]+$/, "is not a user id")),
  model: optional(z.string().trim().min(1).max(200)),
  effort: optional(z.enum(["low", "medium", "high"])),
});

const FIX: Readonly<Record<string, string>> = {
  effort: "choose low, medium or high",
  model: "give a model name of at most 200 characters",
};

/** What a bad input fails the step with: which input, and what it needs. */
function inputRefusal(error: z.ZodError): string {
  const issue = error.issues[0];
  const name = String(issue?.path[0] ?? "an input");
  const fix = FIX[name] ?? "choose it from the list";
  return `The step's ${name} input is not valid (${issue?.message ?? "unreadable"}): ${fix}.`;
}

export function register(app: App, deps: ListenerDeps): void {
  const { coordinator, logger, workflowSteps } = deps;
  app.function(RUN_TASK, async ({ event, context }) => {
    const execution = Execution.safeParse(event);
    if (!execution.success) {
      // Without its id and token the execution cannot be ended: Slack times it out.
      logger.warn({ issues: execution.error.issues.length }, "a workflow step looked malformed");
      return;
    }
    const teamId = authorisedTeam(context);
    const { function_execution_id: id, bot_access_token: token } = execution.data;
    const step = workflowSteps.keep(id, token);
    const inputs = Inputs.safeParse(execution.data.inputs);
    if (!inputs.success) {
      await coordinator.failStep(teamId, step, inputRefusal(inputs.error));
      return;
    }
    const { prompt, channel, requester, model, effort } = inputs.data;
    await coordinator.runStep({
      teamId,
      step,
      prompt,
      channelId: channel,
      requester,
      options: { ...(model ? { model } : {}), ...(effort ? { effort } : {}) },
    });
  });
}
