/**
 * Slack's agent view (the app opened in the side panel, its Messages tab): when a person opens
 * it (`app_home_opened` with `tab: "messages"`, which replaced `assistant_thread_started`), the
 * configured suggested prompts are set (`assistant.threads.setSuggestedPrompts`, which needs
 * no thread there). `app_context_changed` (what the person is looking at) is accepted quietly:
 * a task is about what it is asked, so the context is not kept.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { ListenerDeps } from "./surface.ts";

const MessagesOpened = z.object({
  event: z.object({
    user: z.string().min(1),
    channel: z.string().min(1),
    tab: z.literal("messages"),
  }),
});

export const PROMPTS_TITLE = "Try one of these";

export function register(app: App, { logger, suggestedPrompts }: ListenerDeps): void {
  app.event("app_home_opened", async ({ body, client }) => {
    const parsed = MessagesOpened.safeParse(body);
    if (!parsed.success || suggestedPrompts.length === 0) return;
    try {
      await client.assistant.threads.setSuggestedPrompts({
        channel_id: parsed.data.event.channel,
        title: PROMPTS_TITLE,
        prompts: suggestedPrompts.map((p) => ({ title: p.title, message: p.message })),
      });
    } catch (err) {
      // The prompts are a help, not the task: the agent view works without them.
      logger.warn({ err }, "could not set the agent view's suggested prompts");
    }
  });

  app.event("app_context_changed", async () => {
    // Acknowledged (Bolt answers events itself) and nothing else: no log line per glance.
  });
}
