// reactions.add and reactions.remove: the bot's emoji reactions on messages.
import { ApiFailure } from "../errors.ts";
import type { Workspace } from "../state.ts";
import type { SlackArgs } from "../types.ts";
import { nonEmpty } from "../util.ts";
import type { MethodFamily } from "./registry.ts";

function reactionTarget(state: Workspace, args: SlackArgs): { key: string; name: string } {
  const channel = state.channel(args.channel);
  const ts = nonEmpty(args.timestamp);
  const name = nonEmpty(args.name);
  if (name === undefined) throw new ApiFailure("invalid_name");
  if (ts === undefined) throw new ApiFailure("message_not_found");
  // Lenient on purpose: messages written by people are often unknown to the double, so reacting to
  // an unknown ts succeeds; a deleted message does not.
  if (state.messages.get(channel)?.get(ts)?.deleted) throw new ApiFailure("message_not_found");
  return { key: `${channel}/${ts}`, name: name.replace(/^:|:$/g, "") };
}

export const reactionsMethods: MethodFamily = {
  "reactions.add": {
    scopes: ["reactions:write"],
    handle: (args, { state }) => {
      const { key, name } = reactionTarget(state, args);
      let byName = state.reactions.get(key);
      if (!byName) {
        byName = new Map();
        state.reactions.set(key, byName);
      }
      const users = byName.get(name) ?? new Set<string>();
      if (users.has(state.botUserId)) throw new ApiFailure("already_reacted");
      users.add(state.botUserId);
      byName.set(name, users);
      return {};
    },
  },
  "reactions.remove": {
    scopes: ["reactions:write"],
    handle: (args, { state }) => {
      const { key, name } = reactionTarget(state, args);
      const users = state.reactions.get(key)?.get(name);
      if (!users?.has(state.botUserId)) throw new ApiFailure("no_reaction");
      users.delete(state.botUserId);
      return {};
    },
  },
};
