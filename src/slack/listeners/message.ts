/**
 * People's messages: a mention or a DM (Slack's agent view threads are DM threads) starts a task,
 * a reply in a task's thread continues it. A deleted message is forgotten with what it held.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { authorisedTeam, fileRefs, fromSlack, type ListenerDeps } from "./surface.ts";

const MentionEvent = z.object({
  type: z.literal("app_mention"),
  channel: z.string().min(1),
  user: z.string().min(1),
  bot_id: z.string().optional(),
  text: z.string().default(""),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
  files: z.array(z.unknown()).optional(),
});

/** Message subtypes that are a person's input; every other subtype is ignored. */
const INPUT_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

const MessageEvent = MentionEvent.extend({
  type: z.literal("message"),
  subtype: z.string().optional(),
  user: z.string().optional(),
  channel_type: z.string().optional(),
});

const MessageDeleted = z.object({
  type: z.literal("message"),
  subtype: z.literal("message_deleted"),
  channel: z.string().min(1),
  deleted_ts: z.string().min(1),
  previous_message: z
    .object({ thread_ts: z.string().optional(), bot_id: z.string().optional() })
    .nullish(),
});

/** The text without the bot's own `<@U…>` mention (other people's mentions stay). */
function withoutMention(text: string, botUserId: string | undefined): string {
  if (!botUserId) return text.trim();
  const token = new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`, "g");
  return text
    .replace(token, " ")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

export function register(app: App, { coordinator }: ListenerDeps): void {
  const handle = (
    context: { teamId?: string | undefined; botUserId?: string | undefined },
    msg: Omit<z.infer<typeof MentionEvent>, "type" | "bot_id">,
    dm: boolean,
    startsTask: boolean,
  ) =>
    coordinator.handleMessage({
      teamId: authorisedTeam(context),
      channelId: msg.channel,
      userId: msg.user,
      text: fromSlack(withoutMention(msg.text, context.botUserId)),
      ts: msg.ts,
      threadTs: msg.thread_ts,
      files: fileRefs(msg.files),
      startsTask,
      surface: dm ? "dm" : "channel",
    });

  app.event("app_mention", async ({ event, context }) => {
    const parsed = MentionEvent.safeParse(event);
    // Another bot mentioning this one is not a person's request.
    if (!parsed.success || parsed.data.bot_id) return;
    await handle(context, parsed.data, parsed.data.channel.startsWith("D"), true);
  });

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
    const { user, ...msg } = parsed.data;
    // Edits, deletions, joins and other bots' messages are not a person's request.
    if (!INPUT_SUBTYPES.has(msg.subtype) || msg.bot_id || !user) return;
    if (user === context.botUserId) return;
    const dm = msg.channel_type === "im" || (!msg.channel_type && msg.channel.startsWith("D"));
    const inThread = msg.thread_ts !== undefined && msg.thread_ts !== msg.ts;
    // In channels only replies in threads matter here (mentions have their own event).
    if (!dm && !inThread) return;
    await handle(context, { ...msg, user }, dm, dm);
  });
}
