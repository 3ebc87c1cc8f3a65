/**
 * People's messages (`message` events): a reply in a task thread continues the task; in a
 * direct message with the app (and in Slack's agent view, whose threads are DM threads) a
 * message outside a task thread starts one. A deleted message (`message_deleted`) is forgotten
 * with what it held: a task's root its task, a waiting reply its place in the queue. Bolt
 * acknowledges events itself.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { withoutMention } from "./mention.ts";
import { authorisedTeam, fileRefs, fromSlack, type ListenerDeps } from "./surface.ts";

/** Message subtypes that are a person's input; every other subtype is ignored. */
const INPUT_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

const MessageEvent = z.object({
  type: z.literal("message"),
  subtype: z.string().optional(),
  channel: z.string().min(1),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
  files: z.array(z.unknown()).optional(),
  channel_type: z.string().optional(),
});

/** Slack's event for a deleted message: its ts, and its thread when it was in one. */
const MessageDeleted = z.object({
  type: z.literal("message"),
  subtype: z.literal("message_deleted"),
  channel: z.string().min(1),
  deleted_ts: z.string().min(1),
  previous_message: z
    .object({ thread_ts: z.string().optional(), bot_id: z.string().optional() })
    .nullish(),
});

export function register(app: App, { coordinator }: ListenerDeps): void {
  app.event("message", async ({ event, context }) => {
    const deleted = MessageDeleted.safeParse(event);
    if (deleted.success) {
      const { channel, deleted_ts: ts, previous_message: previous } = deleted.data;
      // A bot's message (the app's own "working…" one going) was never a waiting reply.
      const replyIn = previous?.bot_id === undefined ? previous?.thread_ts : undefined;
      const teamId = authorisedTeam(context);
      await coordinator.forgetting.messageDeleted(teamId, channel, ts, replyIn);
      return;
    }
    const parsed = MessageEvent.safeParse(event);
    if (!parsed.success) return;
    const msg = parsed.data;
    // Edits, deletions, joins and other bots' messages are not a person's request.
    if (!INPUT_SUBTYPES.has(msg.subtype) || msg.bot_id || !msg.user) return;
    if (msg.user === context.botUserId) return;
    const dm = msg.channel_type === "im" || (!msg.channel_type && msg.channel.startsWith("D"));
    const inThread = msg.thread_ts !== undefined && msg.thread_ts !== msg.ts;
    // In channels only replies in threads matter here (mentions have their own event).
    if (!dm && !inThread) return;
    await coordinator.handleMessage({
      teamId: authorisedTeam(context),
      channelId: msg.channel,
      userId: msg.user,
      text: fromSlack(withoutMention(msg.text ?? "", context.botUserId)),
      ts: msg.ts,
      threadTs: msg.thread_ts,
      files: fileRefs(msg.files),
      startsTask: dm,
      surface: dm ? "dm" : "channel",
    });
  });
}
