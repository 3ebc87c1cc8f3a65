/**
 * Slack's agent view (the app in the side panel): its Stop control stops the thread's run like the
 * Stop button; opening its Messages tab (`app_home_opened`, `tab: "messages"`, which replaced
 * `assistant_thread_started`) sets the suggested prompts (they need no thread there).
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { authorisedTeam, type ListenerDeps } from "./surface.ts";

const SessionStopped = z.object({
  type: z.literal("agent_session_stopped"),
  channel: z.string().min(1),
  user: z.string().min(1),
  thread_ts: z.string().min(1),
});

const MessagesOpened = z.object({
  event: z.object({
    user: z.string().min(1),
    channel: z.string().min(1),
    tab: z.literal("messages"),
  }),
});

export function register(app: App, deps: ListenerDeps): void {
  const { coordinator, logger, suggestedPrompts } = deps;
  app.event("agent_session_stopped", async ({ event, client, context }) => {
    const parsed = SessionStopped.safeParse(event);
    if (!parsed.success) return;
    const { channel, user, thread_ts: threadTs } = parsed.data;
    await coordinator.handleSessionStopped(
      { key: { teamId: authorisedTeam(context), channelId: channel, threadTs }, userId: user },
      async (text) => {
        await client.chat.postEphemeral({ channel, user, thread_ts: threadTs, text });
      },
    );
  });

  app.event("app_home_opened", async ({ body, client }) => {
    const parsed = MessagesOpened.safeParse(body);
    if (!parsed.success || suggestedPrompts.length === 0) return;
    try {
      await client.assistant.threads.setSuggestedPrompts({
        channel_id: parsed.data.event.channel,
        title: "Try one of these",
        prompts: suggestedPrompts.map((p) => ({ title: p.title, message: p.message })),
      });
    } catch (err) {
      // The prompts are a help, not the task: the agent view works without them.
      logger.warn({ err }, "could not set the agent view's suggested prompts");
    }
  });

  // Acknowledged (by Bolt) and nothing else: a task is about what it is asked, not the context.
  app.event("app_context_changed", async () => undefined);
}
