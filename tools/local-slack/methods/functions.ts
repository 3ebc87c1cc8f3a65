// functions.completeSuccess, functions.completeError: the app ends an execution of one of its
// Workflow Builder steps (LocalSlack.executeFunction started it). As on Slack (the methods'
// reference pages): an unknown execution is `function_execution_not_found`, one already ended
// `execution_not_in_running_state`, outputs that do not fit the step's output parameters
// `parameter_validation_failed` (a `string` holds at most 4,000 UTF-8 bytes, Slack's "Slack
// types" reference). The double's own choice, where Slack does not document it: only the
// execution's own token (`bot_access_token`) ends it; any other is `not_allowed_token_type`.
import { ApiFailure, invalid } from "../errors.ts";
import type { Workspace } from "../state.ts";
import type { Caller } from "../tenancy.ts";
import type { FunctionExecution, SlackArgs } from "../types.ts";
import { isRecord, nonEmpty } from "../util.ts";
import type { MethodFamily } from "./registry.ts";

/** Slack's `string` type: "UTF-8 encoded string, up to 4000 bytes". */
export const STRING_MAX_BYTES = 4000;

/** The running execution the call names, ended only with its own token. */
function running(state: Workspace, args: SlackArgs, caller: Caller | undefined): FunctionExecution {
  const id = nonEmpty(args.function_execution_id);
  if (id === undefined) {
    throw invalid({
      error: "invalid_arguments",
      message: "missing required field: function_execution_id",
      pointer: "/function_execution_id",
    });
  }
  const execution = state.executions.get(id);
  if (!execution) throw new ApiFailure("function_execution_not_found");
  if (caller?.token !== execution.token) throw new ApiFailure("not_allowed_token_type");
  if (execution.status !== "running") throw new ApiFailure("execution_not_in_running_state");
  return execution;
}

function badOutputs(message: string, pointer: string): ApiFailure {
  return invalid({ error: "parameter_validation_failed", message, pointer });
}

/** The outputs as the step's definition allows them (a step the double does not know: any). */
function checkOutputs(state: Workspace, execution: FunctionExecution, outputs: unknown): void {
  if (!isRecord(outputs)) throw badOutputs("outputs must be an object", "/outputs");
  const definition = state.functions.get(execution.callbackId);
  if (!definition) return;
  const params = definition.output_parameters;
  for (const [name, value] of Object.entries(outputs)) {
    const param = params[name];
    const at = `/outputs/${name}`;
    if (!param) throw badOutputs(`${name} is not an output of ${execution.callbackId}`, at);
    if (param.type !== "string") continue;
    if (typeof value !== "string") throw badOutputs(`${name} must be a string`, at);
    const bytes = Buffer.byteLength(value, "utf8");
    if (bytes > STRING_MAX_BYTES) {
      throw badOutputs(`${name} is ${bytes} bytes; a string holds at most ${STRING_MAX_BYTES}`, at);
    }
  }
  for (const [name, param] of Object.entries(params)) {
    if (param.is_required && (outputs[name] === undefined || outputs[name] === "")) {
      throw badOutputs(`missing required output: ${name}`, `/outputs/${name}`);
    }
  }
}

export const functionsMethods: MethodFamily = {
  "functions.completeSuccess": {
    handle: (args, { state }, _team, caller) => {
      const execution = running(state, args, caller);
      checkOutputs(state, execution, args.outputs);
      execution.status = "completed";
      execution.outputs = structuredClone(args.outputs as Record<string, unknown>);
      return {};
    },
  },
  "functions.completeError": {
    handle: (args, { state }, _team, caller) => {
      const execution = running(state, args, caller);
      const error = nonEmpty(args.error);
      if (error === undefined) {
        throw invalid({
          error: "invalid_arguments",
          message: "missing required field: error",
          pointer: "/error",
        });
      }
      execution.status = "failed";
      execution.error = error;
      return {};
    },
  },
};
