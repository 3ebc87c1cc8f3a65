/**
 * Every Slack payload is acknowledged at once. Bolt (5.x) acknowledges events itself, but a
 * button, form, shortcut or command no listener matches is never acknowledged: its HTTP receiver
 * answers 404 after 3 seconds and its Socket Mode receiver not at all, and the person sees an
 * error (Bolt's App.processEvent, HTTPResponseAck, SocketModeResponseAck). So each payload's
 * acknowledgement is tracked (`trackAcks`); one no listener acknowledged is answered privately
 * as an older version's (`answerUnrecognised`); one that failed before any middleware (its type
 * unknown to Bolt, a failed authorization) is acknowledged empty at the end.
 */
import type { App, Middleware, AnyMiddlewareArgs } from "@slack/bolt";
import type { Logger } from "pino";
import { answerableOf, answerPrivately, namePayload } from "./private-answer.ts";

/** What an older version's button, form or shortcut is answered with. */
export function olderVersion(kind: string): string {
  const what =
    kind === "view_submission" || kind === "view_closed"
      ? "form"
      : kind === "shortcut" || kind === "message_action"
        ? "shortcut"
        : kind === "command"
          ? "command"
          : "button";
  return `This ${what} belongs to an older version of Task Agent, so nothing happened. Start a new task with \`/task\`.`;
}

/** The context key holding whether the payload was acknowledged (not one of Bolt's own). */
const ACK_STATE = "taskAgentAck";

interface AckState {
  acked: boolean;
}

/** Wraps `app.processEvent`, the one door every receiver sends payloads through. */
export function trackAcks(app: App, logger: Logger): void {
  const process = app.processEvent.bind(app);
  app.processEvent = async (event) => {
    const state: AckState = { acked: false };
    const ack: typeof event.ack = async (response?: unknown) => {
      state.acked = true;
      await event.ack(response);
    };
    const customProperties = { ...event.customProperties, [ACK_STATE]: state };
    try {
      await process({ ...event, ack, customProperties });
    } finally {
      if (!state.acked) {
        state.acked = true;
        await event
          .ack()
          .catch((err: unknown) => logger.warn({ err }, "could not acknowledge a Slack payload"));
      }
    }
  };
}

/** The outermost middleware: after the listeners, tells the person of a payload none acknowledged. */
export function answerUnrecognised(logger: Logger): Middleware<AnyMiddlewareArgs> {
  return async (args) => {
    await args.next();
    const state = args.context[ACK_STATE] as AckState | undefined;
    if (!state || state.acked) return;
    const name = namePayload(args.body);
    // Events were acknowledged by Bolt before any middleware ran.
    if (name.kind === "event") return;
    logger.info(
      { kind: name.kind, id: name.id, user: name.userId, team: args.context.teamId },
      "answered a Slack payload this version does not handle (an older version's button, form or shortcut)",
    );
    await answerPrivately(answerableOf(args), olderVersion(name.kind), logger);
  };
}
