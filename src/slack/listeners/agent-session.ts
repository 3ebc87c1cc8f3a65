/**
 * Slack's own Stop control in the agent view (`agent_session_stopped`): it stops the run of
 * that thread like the Stop button does; refusals are told privately in the thread.
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

export function register(app: App, { coordinator }: ListenerDeps): void {
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
}
