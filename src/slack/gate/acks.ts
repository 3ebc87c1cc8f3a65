/**
 * Every Slack payload acknowledged and answered privately. Bolt 5 acks events itself, not a button,
 * form, shortcut or command no listener matches: HTTP answers 404 after 3 s, Socket Mode nothing,
 * and the person sees an error (Bolt's App.processEvent, HTTPResponseAck, SocketModeResponseAck).
 */
import type { AllMiddlewareArgs, AnyMiddlewareArgs, App, Middleware } from "@slack/bolt";
import type { Logger } from "pino";
import { z } from "zod";
import { noticeModal } from "../../view/blocks.ts";

/** Payload kinds by `type` (a command: by `command`), and what an older version's one is called. */
const KINDS = {
  block_actions: "button",
  view_submission: "form",
  view_closed: "form",
  shortcut: "shortcut",
  message_action: "shortcut",
  command: "command",
} as const;
type Kind = keyof typeof KINDS;

/** What an older version's button, form or shortcut is answered with. */
export function olderVersion(kind: string): string {
  return `This ${(KINDS as Partial<Record<string, string>>)[kind] ?? "button"} belongs to an older version of Task Agent, so nothing happened. Start a new task with \`/task\`.`;
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

/** What the answers read of any payload (its kind, ids, sender). */
const Payload = z.object({
  type: z.string().optional(),
  command: z.string().optional(),
  callback_id: z.string().optional(),
  trigger_id: z.string().optional(),
  response_url: z.string().optional(),
  user_id: z.string().optional(),
  user: z.object({ id: z.string().optional() }).nullish(),
  view: z
    .object({
      id: z.string().optional(),
      type: z.string().optional(),
      callback_id: z.string().optional(),
    })
    .nullish(),
  actions: z.array(z.object({ action_id: z.string().optional() })).optional(),
  event: z.object({ type: z.string().optional() }).optional(),
});
type Payload = z.infer<typeof Payload>;

const readPayload = (body: unknown): Payload => Payload.safeParse(body).data ?? {};

/** A payload's kind and `id` (its action, callback or command) for the log and the answer. */
export function namePayload(body: unknown) {
  const p = readPayload(body);
  const userId = p.user?.id ?? p.user_id;
  if (p.event) return { kind: "event" as const, id: p.event.type, userId };
  if (p.command !== undefined) return { kind: "command" as const, id: p.command, userId };
  if (p.type === "block_suggestion") return { kind: "options" as const, id: p.callback_id, userId };
  const kind = (Object.keys(KINDS) as Kind[]).find((k) => k === p.type) ?? "other";
  const id =
    kind === "block_actions"
      ? p.actions?.[0]?.action_id
      : kind === "view_submission" || kind === "view_closed"
        ? p.view?.callback_id
        : p.callback_id;
  return { kind, id, userId };
}

/** What answering needs of Bolt's middleware arguments (`ack`: none for events). */
interface Answerable {
  readonly body: unknown;
  readonly ack: ((response?: Record<string, unknown>) => Promise<void>) | undefined;
  readonly respond: ((message: Record<string, unknown>) => Promise<unknown>) | undefined;
  readonly client: Pick<AllMiddlewareArgs["client"], "views">;
}

export function answerableOf(args: AnyMiddlewareArgs & AllMiddlewareArgs): Answerable {
  const loose = args as unknown as Partial<Pick<Answerable, "ack" | "respond">>;
  return { body: args.body, ack: loose.ack, respond: loose.respond, client: args.client };
}

/**
 * Acks the payload and tells its sender `text` privately, the way Slack's interactivity pages name
 * for each kind; nothing for an event or a closed modal; options are answered empty.
 */
export async function answerPrivately(
  payload: Answerable,
  text: string,
  logger: Logger,
): Promise<void> {
  const { ack, respond, client } = payload;
  const p = readPayload(payload.body);
  const { kind } = namePayload(payload.body);
  if (!ack) return;
  if (kind === "command") return ack({ response_type: "ephemeral", text });
  // A form's answer goes in the form itself: it is replaced by the notice.
  if (kind === "view_submission")
    return ack({ response_action: "update", view: noticeModal(text) });
  if (kind === "options") return ack({ options: [] });
  await ack();
  if (kind === "view_closed" || kind === "other") return;
  const told = async (): Promise<unknown> => {
    // A button in a message: privately under it.
    if (kind === "block_actions" && respond && p.response_url)
      return respond({ response_type: "ephemeral", replace_original: false, text });
    // A button inside a modal: the modal says it.
    if (kind === "block_actions" && p.view?.type === "modal" && p.view.id)
      return client.views.update({ view_id: p.view.id, view: noticeModal(text) as never });
    // A shortcut, or a button in the Home tab: a modal of its own.
    if (p.trigger_id)
      return client.views.open({ trigger_id: p.trigger_id, view: noticeModal(text) as never });
  };
  await told().catch((err: unknown) =>
    logger.debug({ err, kind }, "could not tell the person privately"),
  );
}
