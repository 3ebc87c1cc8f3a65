// views.open: a modal opened with a trigger id (each trigger opens one view), validated like Slack
// validates views (view-kit.ts); the opened views are kept for tests and the playground.
import { ApiFailure, check } from "../errors.ts";
import type { SlackArgs } from "../types.ts";
import { clone, isRecord, nonEmpty, str } from "../util.ts";
import { validateView } from "../view-kit.ts";
import type { MethodContext, MethodFamily } from "./registry.ts";

/** The `view` argument: a JSON string in a form body, an object in a JSON body. */
function viewArg(args: SlackArgs): Record<string, unknown> {
  const raw = args.view;
  let view: unknown = raw;
  if (typeof raw === "string") {
    try {
      view = JSON.parse(raw);
    } catch {
      throw new ApiFailure("invalid_arguments");
    }
  }
  if (!isRecord(view)) throw new ApiFailure("invalid_arguments");
  return view;
}

function open(
  args: SlackArgs,
  { state, now }: MethodContext,
  team: string,
): Record<string, unknown> {
  const trigger = nonEmpty(args.trigger_id);
  if (trigger === undefined) throw new ApiFailure("invalid_trigger_id");
  if (state.usedTriggers.has(trigger)) throw new ApiFailure("expired_trigger_id");
  const view = viewArg(args);
  check(validateView(view));
  state.usedTriggers.add(trigger);
  const id = `V${String(state.views.length + 1).padStart(10, "0")}`;
  const opened = {
    ...clone(view),
    id,
    team_id: team,
    app_id: state.appId,
    bot_id: state.botId,
    state: { values: {} },
    hash: `${Math.floor(now() / 1000)}.${id}`,
    private_metadata: str(view.private_metadata) ?? "",
    callback_id: str(view.callback_id) ?? "",
  };
  state.views.push({ id, trigger, view: opened, at: now() });
  return { view: clone(opened) };
}

export const viewsMethods: MethodFamily = {
  "views.open": { handle: open },
};
