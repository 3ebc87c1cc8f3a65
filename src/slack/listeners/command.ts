/**
 * `/task <prompt>`: a new task; alone, the New task modal; `settings`, the channel's defaults (and
 * admins' Workspace settings button); `history`, `files`: the views of your latest task here. A
 * refused prompt is answered in the acknowledgement, everything later through `response_url`.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { USAGE } from "../../view/render.ts";
import { openNewTaskModal } from "./modal.ts";
import { openChannelSettings } from "./settings.ts";
import { openTaskView } from "./task-views.ts";
import { offerWorkspaceSettings } from "./workspace-settings.ts";
import { authorisedTeam, fromSlack, type ListenerDeps, privately, tellThrough } from "./surface.ts";

const CommandBody = z.object({
  channel_id: z.string().min(1),
  user_id: z.string().min(1),
  text: z.string().default(""),
  trigger_id: z.string().optional(),
});

export function register(app: App, deps: ListenerDeps): void {
  const { coordinator } = deps;
  app.command("/task", async ({ ack, body, respond, client, context }) => {
    const parsed = CommandBody.safeParse(body);
    if (!parsed.success) {
      await ack(privately("That request looked malformed; please try again."));
      return;
    }
    const cmd = parsed.data;
    const teamId = authorisedTeam(context);
    const prompt = fromSlack(cmd.text);
    const word = prompt.trim().toLowerCase();
    const { channel_id: channelId, user_id: userId } = cmd;
    if (word === "help") {
      await ack(privately(USAGE));
      return;
    }
    if (word === "settings" && cmd.trigger_id) {
      await ack();
      const target = { teamId, channelId, userId, trigger: cmd.trigger_id };
      await openChannelSettings(client, deps, target, tellThrough(respond));
      await offerWorkspaceSettings(client, deps, { teamId, userId }, respond);
      return;
    }
    if ((word === "history" || word === "files") && cmd.trigger_id) {
      // The person's latest task in this channel (the buttons under an answer reach any other).
      await ack();
      const recent = await coordinator.preferences.recentTasks(teamId, userId).catch(() => []);
      const task = recent.find((t) => t.channelId === channelId);
      if (!task) {
        await tellThrough(respond)(
          `You have no recent task in this channel. Use the *History* and *Files* buttons under a task's answer, or start one with \`/task\`.`,
        );
        return;
      }
      const key = { teamId, channelId, threadTs: task.threadTs };
      await openTaskView(client, deps, cmd.trigger_id, word, key, userId);
      return;
    }
    if (word === "" && cmd.trigger_id) {
      // A trigger id is valid for 3 seconds.
      await ack();
      const opened = await openNewTaskModal(client, deps, cmd.trigger_id, { channelId });
      if (!opened) await tellThrough(respond)(USAGE);
      return;
    }
    const refusal = coordinator.refuseNewTask(prompt);
    if (refusal !== undefined) {
      await ack(privately(refusal));
      return;
    }
    await ack();
    await coordinator.startTask(
      {
        teamId,
        channelId,
        userId,
        prompt,
        // A slash command retried by a flaky network carries the same trigger_id.
        delivery: cmd.trigger_id ? { kind: "trigger", id: cmd.trigger_id } : undefined,
      },
      tellThrough(respond),
    );
  });
}
