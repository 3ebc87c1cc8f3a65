/**
 * What a listener module is: `register(app, deps)` wires one Slack surface onto the Bolt app;
 * and what listeners share: their dependencies, Slack's text decoding, private answers.
 */
import type { App, RespondFn } from "@slack/bolt";
import type { Logger } from "pino";
import type { TaskCoordinator, TellUser } from "../../relay/coordinator.ts";

/** What a listener gets: listeners parse Slack's payload, acknowledge, and call the coordinator. */
export interface ListenerDeps {
  readonly coordinator: TaskCoordinator;
  readonly logger: Logger;
}

/** One Slack surface (a slash command, an event, interactive components, …). */
export interface Surface {
  register(app: App, deps: ListenerDeps): void;
}

/** Slack escapes &, < and > in what people type; the service must get what they typed. */
export const fromSlack = (s: string): string =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** A message only the person who acted sees, as an acknowledgement or `respond` body. */
export const privately = (text: string) => ({ response_type: "ephemeral" as const, text });

/** Tells the person who acted through the request's `response_url` (commands, actions). */
export const tellThrough =
  (respond: RespondFn): TellUser =>
  async (text) => {
    await respond({ ...privately(text), replace_original: false });
  };
