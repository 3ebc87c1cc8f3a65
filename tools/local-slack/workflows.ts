// Workflow Builder steps of the app, as Slack runs them: an execution with a token of its own,
// and the `function_executed` event describing the step (Slack's function_executed reference:
// `function` with its callback id and parameters, `inputs`, `function_execution_id`,
// `workflow_execution_id`, `bot_access_token`).
import type { EventInput } from "./slack-requests.ts";
import type { Workspace } from "./state.ts";
import { secret, type Tenancy } from "./tenancy.ts";
import type { FunctionParameter } from "./types.ts";

let seq = 0;

/** The parameters as the event lists them: each with its name. */
const listed = (params: Record<string, FunctionParameter> = {}) =>
  Object.entries(params).map(([name, p]) => ({
    name,
    type: p.type,
    ...(p.title === undefined ? {} : { title: p.title }),
    ...(p.description === undefined ? {} : { description: p.description }),
    is_required: p.is_required ?? false,
  }));

/** A new execution of the step `callbackId` in `team` (the double's own by default). */
export function functionExecution(
  state: Workspace,
  tenancy: Tenancy,
  step: { callbackId: string; inputs?: Record<string, unknown>; team?: string },
): { id: string; token: string; event: EventInput } {
  const teamId = step.team ?? state.teamId;
  const team = tenancy.teams.get(teamId);
  if (!team) throw new Error(`local-slack: no workspace ${teamId}`);
  const n = ++seq;
  const id = `Fx${String(n).padStart(10, "0")}`;
  const workflowExecutionId = `Wx${String(n).padStart(10, "0")}`;
  // The execution's token speaks for the workspace's bot (its scopes), and ends this execution.
  const token = `xwfp-${teamId}-${secret()}`;
  tenancy.grant(token, { team, scopes: undefined, expiresAt: undefined });
  const inputs = structuredClone(step.inputs ?? {});
  state.executions.set(id, {
    id,
    workflowExecutionId,
    callbackId: step.callbackId,
    teamId,
    token,
    inputs,
    status: "running",
  });
  const definition = state.functions.get(step.callbackId);
  const now = Math.floor(state.now() / 1000);
  const event: EventInput = {
    event_id: `EvFn${now.toString(36)}x${n}`,
    team_id: teamId,
    api_app_id: state.appId,
    event: {
      type: "function_executed",
      function: {
        id: `Fn${String(n).padStart(10, "0")}`,
        callback_id: step.callbackId,
        title: definition?.title ?? step.callbackId,
        ...(definition?.description === undefined ? {} : { description: definition.description }),
        type: "app",
        input_parameters: listed(definition?.input_parameters),
        output_parameters: listed(definition?.output_parameters),
        app_id: state.appId,
        date_created: now,
        date_updated: now,
        date_deleted: 0,
      },
      inputs,
      function_execution_id: id,
      workflow_execution_id: workflowExecutionId,
      event_ts: `${now}.000200`,
      bot_access_token: token,
    },
  };
  return { id, token, event };
}
