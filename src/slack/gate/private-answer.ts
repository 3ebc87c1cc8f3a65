/** What a Slack payload is, and how to answer its sender privately whatever it is. */
import type { AllMiddlewareArgs, AnyMiddlewareArgs } from "@slack/bolt";
import type { Logger } from "pino";
import { z } from "zod";
import { noticeModal } from "../../view/blocks.ts";

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

const KINDS = [
  "block_actions",
  "view_submission",
  "view_closed",
  "shortcut",
  "message_action",
] as const;

/** `id`: the name the app knows it by (action, callback or command). */
interface PayloadName {
  readonly kind: "command" | "event" | "options" | "other" | (typeof KINDS)[number];
  readonly id: string | undefined;
  readonly userId: string | undefined;
}

const parse = (body: unknown): Payload => Payload.safeParse(body).data ?? {};

/** Names a payload for the log and for choosing how to answer (never its content). */
export function namePayload(body: unknown): PayloadName {
  const p = parse(body);
  const userId = p.user?.id ?? p.user_id;
  if (p.event) return { kind: "event", id: p.event.type, userId };
  if (p.command !== undefined) return { kind: "command", id: p.command, userId };
  if (p.type === "block_suggestion") return { kind: "options", id: p.callback_id, userId };
  const kind = KINDS.find((k) => k === p.type) ?? "other";
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

/** Bolt's middleware arguments differ by payload kind: the parts an answer needs. */
export function answerableOf(args: AnyMiddlewareArgs & AllMiddlewareArgs): Answerable {
  const loose = args as unknown as Partial<Pick<Answerable, "ack" | "respond">>;
  return { body: args.body, ack: loose.ack, respond: loose.respond, client: args.client };
}

/**
 * Acknowledges the payload and tells its sender `text` privately, the way Slack's interactivity
 * pages name for each kind; nothing for an event or a closed modal; options are answered empty.
 */
export async function answerPrivately(
  payload: Answerable,
  text: string,
  logger: Logger,
): Promise<void> {
  const { ack, respond, client } = payload;
  const p = parse(payload.body);
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
