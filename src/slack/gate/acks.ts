/**
 * Every Slack payload acknowledged. Bolt 5 acknowledges events itself, but not a button, form,
 * shortcut or command no listener matches: HTTP answers 404 after 3 s, Socket Mode nothing, and
 * the person sees an error (Bolt's App.processEvent, HTTPResponseAck, SocketModeResponseAck).
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

type AckState = { acked: boolean };

/**
 * Wraps `app.processEvent`, the one door every receiver sends payloads through: a payload that
 * failed before any middleware (its type unknown to Bolt, a failed authorization) is acked empty.
 */
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

/** The outermost middleware: tells the person of a payload no listener acknowledged. */
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
