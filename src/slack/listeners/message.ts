/**
 * Messages in task threads (`message` events): a person's reply continues the task. Bolt
 * acknowledges events itself; the coordinator decides whether the thread is a task thread.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { fromSlack, type ListenerDeps } from "./surface.ts";

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
});

const Envelope = z.object({ team_id: z.string().min(1), event_id: z.string().min(1) });

export function register(app: App, { coordinator }: ListenerDeps): void {
  app.event("message", async ({ event, body }) => {
    const parsed = MessageEvent.safeParse(event);
    if (!parsed.success) return;
    const msg = parsed.data;
    if (!INPUT_SUBTYPES.has(msg.subtype) || msg.bot_id || !msg.user) return;
    if (!msg.thread_ts || msg.thread_ts === msg.ts) return; // only replies in threads
    const envelope = Envelope.safeParse(body);
    if (!envelope.success) return;
    const { team_id: teamId, event_id: eventId } = envelope.data;
    await coordinator.handleReply({
      key: { teamId, channelId: msg.channel, threadTs: msg.thread_ts },
      userId: msg.user,
      text: fromSlack(msg.text ?? ""),
      ts: msg.ts,
      hasFiles: (msg.files?.length ?? 0) > 0 || msg.subtype === "file_share",
      // Slack redelivers events (same event_id); only the first delivery counts.
      delivery: { kind: "event", id: eventId },
    });
  });
}
