/**
 * `@Task Agent …` in a channel (`app_mention`): a new task answered in a thread under the
 * mention, or a follow-up when the mention is a reply in a task's thread.
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

/** The text without the bot's own `<@U…>` mention (other people's mentions stay). */
export function withoutMention(text: string, botUserId: string | undefined): string {
  if (!botUserId) return text.trim();
  const token = new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`, "g");
  return text
    .replace(token, " ")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

export function register(app: App, { coordinator }: ListenerDeps): void {
  app.event("app_mention", async ({ event, context }) => {
    const parsed = MentionEvent.safeParse(event);
    if (!parsed.success) return;
    const msg = parsed.data;
    if (msg.bot_id) return; // another bot mentioning this one: not a person's request
    await coordinator.handleMessage({
      teamId: authorisedTeam(context),
      channelId: msg.channel,
      userId: msg.user,
      text: fromSlack(withoutMention(msg.text, context.botUserId)),
      ts: msg.ts,
      threadTs: msg.thread_ts,
      files: fileRefs(msg.files),
      startsTask: true,
      surface: msg.channel.startsWith("D") ? "dm" : "channel",
    });
  });
}
