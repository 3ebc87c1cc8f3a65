// views.open: a modal opened with a trigger id (each trigger opens one view), validated like Slack
// validates views (view-kit.ts); the opened views are kept for tests and the playground.
// views.update replaces an open modal; views.publish (App Home): a person's Home tab, in its own block below.
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

// views.update: replaces an open view by id (a stale `hash` is refused like Slack does).
function update(args: SlackArgs, { state, now }: MethodContext): Record<string, unknown> {
  const id = nonEmpty(args.view_id);
  const index = id === undefined ? -1 : state.views.findIndex((v) => v.id === id);
  const current = state.views[index];
  if (!current) throw new ApiFailure("not_found");
  const hash = nonEmpty(args.hash);
  if (hash !== undefined && hash !== current.view.hash) throw new ApiFailure("hash_conflict");
  const view = viewArg(args);
  check(validateView(view));
  const updated = {
    ...clone(view),
    id: current.id,
    team_id: current.view.team_id,
    app_id: state.appId,
    bot_id: state.botId,
    state: { values: {} },
    hash: `${Math.floor(now() / 1000)}.${current.id}.${index}.${Math.random().toString(36).slice(2, 8)}`,
    private_metadata: str(view.private_metadata) ?? "",
    callback_id: str(view.callback_id) ?? "",
  };
  state.views[index] = { ...current, view: updated, at: now() };
  return { view: clone(updated) };
}

// ---------------------------------------------------------------------------------------------------
// views.publish: the App Home tab of one person. Each person has one home view whose id stays the
// same across publishes; a `hash` that is not the current view's answers `hash_conflict`.
// ---------------------------------------------------------------------------------------------------

function publish(
  args: SlackArgs,
  { state, now }: MethodContext,
  team: string,
): Record<string, unknown> {
  const user = nonEmpty(args.user_id);
  if (user === undefined || !state.users.has(user)) throw new ApiFailure("user_not_found");
  const view = viewArg(args);
  if (view.type !== "home") throw new ApiFailure("invalid_arguments");
  check(validateView(view));
  const current = state.homeTabs.get(user);
  const hash = nonEmpty(args.hash);
  if (hash !== undefined && hash !== str(current?.view.hash)) throw new ApiFailure("hash_conflict");
  const id = current?.id ?? `VH${String(state.homeTabs.size + 1).padStart(9, "0")}`;
  const published = {
    ...clone(view),
    id,
    team_id: team,
    app_id: state.appId,
    bot_id: state.botId,
    state: { values: {} },
    hash: `${Math.floor(now() / 1000)}.${id}.${state.homePublishes.length + 1}`,
    private_metadata: str(view.private_metadata) ?? "",
    callback_id: str(view.callback_id) ?? "",
  };
  const entry = { id, user, view: published, at: now() };
  state.homeTabs.set(user, entry);
  state.homePublishes.push(entry);
  return { view: clone(published) };
}

export const viewsMethods: MethodFamily = {
  "views.open": { handle: open },
  "views.update": { handle: update },
  "views.publish": { handle: publish },
};
