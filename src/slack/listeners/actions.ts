/**
 * Buttons in the bot's messages: Stop, and the feedback buttons (👍/👎) under a finished answer.
 * Acknowledged at once; the answer goes privately through the action's `response_url`.
 */
import type { App } from "@slack/bolt";
import type { z } from "zod";
import { decodeFeedbackValue, FEEDBACK_ACTION_ID, feedbackThanks } from "../../view/feedback.ts";
import { decodeStopValue, STOP_ACTION_ID } from "../../view/render.ts";
import { authorisedTeam, ButtonPress, type ListenerDeps, tellThrough } from "./surface.ts";

/** Whether a button was pressed in `channelId` (or where Slack names no channel). */
function pressedIn(body: z.infer<typeof ButtonPress>, channelId: string): boolean {
  const where = body.channel?.id ?? body.container?.channel_id;
  return where === undefined || where === channelId;
}

export function register(app: App, deps: ListenerDeps): void {
  const { coordinator } = deps;
  app.action(STOP_ACTION_ID, async ({ ack, body, respond, context }) => {
    await ack();
    const tell = tellThrough(respond);
    const parsed = ButtonPress.safeParse(body);
    const ref = parsed.success ? decodeStopValue(parsed.data.actions[0]?.value) : undefined;
    // The button must be pressed where its run is: a value copied elsewhere stops nothing.
    if (!parsed.success || !ref || !pressedIn(parsed.data, ref.channelId)) {
      await tell("That Stop button is not valid any more.");
      return;
    }
    const teamId = authorisedTeam(context);
    await coordinator.handleStop(
      {
        key: { teamId, channelId: ref.channelId, threadTs: ref.threadTs },
        userId: parsed.data.user.id,
        runId: ref.runId,
      },
      tell,
    );
  });

  app.action(FEEDBACK_ACTION_ID, async ({ ack, body, respond, context }) => {
    await ack();
    const tell = tellThrough(respond);
    const parsed = ButtonPress.safeParse(body);
    const vote = parsed.success ? decodeFeedbackValue(parsed.data.actions[0]?.value) : undefined;
    // Counted where its answer is: a value copied into another channel counts for nothing.
    if (!parsed.success || !vote || !pressedIn(parsed.data, vote.ref.channelId)) {
      await tell("Those feedback buttons are not valid any more.");
      return;
    }
    const teamId = authorisedTeam(context);
    let changed: boolean;
    try {
      changed = await deps.feedback.record({ teamId, userId: parsed.data.user.id, ...vote });
    } catch (err) {
      deps.logger.warn({ err }, "could not record feedback");
      await tell("Your feedback could not be recorded right now; please try again in a minute.");
      return;
    }
    await tell(feedbackThanks(vote.kind, changed));
  });
}
