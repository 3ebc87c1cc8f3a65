/**
 * Buttons in the bot's messages: Stop, and the feedback buttons (👍/👎) under a finished answer.
 * Acknowledged at once; the answer goes privately through the action's `response_url`.
 */
import type { App } from "@slack/bolt";
import { decodeFeedbackValue, FEEDBACK_ACTION_ID, feedbackThanks } from "../../view/feedback.ts";
import { decodeStopValue, STOP_ACTION_ID } from "../../view/render.ts";
import { authorisedTeam, ButtonPress, type ListenerDeps, tellThrough } from "./surface.ts";

/** A button's value and presser if pressed where its value says (or Slack names no channel). */
function pressed<T>(
  body: unknown,
  decode: (value?: string) => T | undefined,
  at: (v: T) => string,
) {
  const parsed = ButtonPress.safeParse(body);
  const value = parsed.success ? decode(parsed.data.actions[0]?.value) : undefined;
  if (!parsed.success || value === undefined) return undefined;
  const where = parsed.data.channel?.id ?? parsed.data.container?.channel_id;
  const here = where === undefined || where === at(value);
  return here ? { value, userId: parsed.data.user.id } : undefined;
}

export function register(app: App, deps: ListenerDeps): void {
  app.action(STOP_ACTION_ID, async ({ ack, body, respond, context }) => {
    await ack();
    const tell = tellThrough(respond);
    const stop = pressed(body, decodeStopValue, (ref) => ref.channelId);
    if (!stop) {
      await tell("That Stop button is not valid any more.");
      return;
    }
    const { channelId, threadTs, runId } = stop.value;
    const key = { teamId: authorisedTeam(context), channelId, threadTs };
    await deps.coordinator.handleStop({ key, userId: stop.userId, runId }, tell);
  });

  app.action(FEEDBACK_ACTION_ID, async ({ ack, body, respond, context }) => {
    await ack();
    const tell = tellThrough(respond);
    const vote = pressed(body, decodeFeedbackValue, (v) => v.ref.channelId);
    if (!vote) {
      await tell("Those feedback buttons are not valid any more.");
      return;
    }
    const teamId = authorisedTeam(context);
    let changed: boolean;
    try {
      changed = await deps.feedback.record({ teamId, userId: vote.userId, ...vote.value });
    } catch (err) {
      deps.logger.warn({ err }, "could not record feedback");
      await tell("Your feedback could not be recorded right now; please try again in a minute.");
      return;
    }
    await tell(feedbackThanks(vote.value.kind, changed));
  });
}
