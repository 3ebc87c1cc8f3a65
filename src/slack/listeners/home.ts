/**
 * App Home: the tab, published when a person opens it, and its erase forms (a person's records,
 * or for admins the workspace's). Its New task and Edit defaults buttons: modal.ts, settings.ts.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import {
  ERASE_MINE_VIEW,
  ERASE_WORKSPACE_CONFIRM,
  ERASE_WORKSPACE_VIEW,
  erasedMineText,
  eraseMineModal,
  eraseWorkspaceModal,
  HOME_ERASE_MINE,
  HOME_ERASE_WORKSPACE,
} from "../../view/home.ts";
import { notAllowedModal } from "../../view/workspace-settings.ts";
import { isAdminOrNo } from "../admin-home.ts";
import {
  authorisedTeam,
  formErrors,
  type ListenerDeps,
  openView,
  Person,
  Submission,
  tellInDm,
  TriggerAction,
} from "./surface.ts";

const HomeOpened = z.object({
  event: z.object({ user: z.string().min(1), tab: z.string().optional() }),
});

const TRY_AGAIN = "Your records could not be erased just now; please try again in a minute.";

export function register(app: App, deps: ListenerDeps): void {
  app.event("app_home_opened", async ({ body, context }) => {
    const parsed = HomeOpened.safeParse(body);
    // The Messages tab sends this event too: only the Home tab is ours to draw.
    if (!parsed.success || (parsed.data.event.tab ?? "home") !== "home") return;
    await deps.home.publish(authorisedTeam(context), parsed.data.event.user);
  });

  app.action(HOME_ERASE_MINE, async ({ ack, body, client }) => {
    await ack();
    const parsed = TriggerAction.safeParse(body);
    if (parsed.success) {
      await openView(client, deps, parsed.data.trigger_id, eraseMineModal(), "the erase form");
    }
  });

  app.view(ERASE_MINE_VIEW, async ({ ack, body, client, context }) => {
    // The form closes at once: erasing may take longer than Slack waits for an answer.
    await ack();
    const parsed = Person.safeParse(body);
    if (!parsed.success) return;
    const teamId = authorisedTeam(context);
    const userId = parsed.data.user.id;
    const erased = await deps.coordinator.forgetting
      .erasePerson(teamId, userId)
      .catch((err: unknown) => deps.logger.warn({ err }, "could not erase a person's records"));
    await tellInDm(client, deps, userId, erased ? erasedMineText(erased) : TRY_AGAIN);
    await deps.home.publish(teamId, userId);
  });

  app.action(HOME_ERASE_WORKSPACE, async ({ ack, body, client, context }) => {
    await ack();
    const parsed = TriggerAction.safeParse(body);
    if (!parsed.success) return;
    const req = { teamId: authorisedTeam(context), userId: parsed.data.user.id };
    const admin = await isAdminOrNo(client, deps.logger, req);
    const view = admin ? eraseWorkspaceModal() : notAllowedModal();
    await openView(client, deps, parsed.data.trigger_id, view, "the erase form");
  });

  app.view(ERASE_WORKSPACE_VIEW, async ({ ack, body, client, context }) => {
    const parsed = Submission.safeParse(body);
    const teamId = authorisedTeam(context);
    const refuse = (error: string) => ack(formErrors({ [ERASE_WORKSPACE_CONFIRM]: error }));
    const ticked = parsed.data?.view.state.values[ERASE_WORKSPACE_CONFIRM]?.value?.selected_options;
    if (!parsed.success || !ticked?.length || ticked.some((o) => o.value !== "erase")) {
      await refuse("Tick the box to confirm, then press Erase.");
      return;
    }
    // The form may be old, or forged: whoever submits it must be an admin now.
    const userId = parsed.data.user.id;
    if (!(await isAdminOrNo(client, deps.logger, { teamId, userId }))) {
      await refuse("Only workspace admins and owners can erase the workspace's records.");
      return;
    }
    await ack();
    const done = await deps.coordinator.forgetting.eraseWorkspace(teamId, userId).then(
      () => "The workspace's records are erased. Its settings and audit trail are kept.",
      (err: unknown) => {
        deps.logger.warn({ err }, "could not erase the workspace's records");
        return "The workspace's records could not all be erased just now; please try again in a minute.";
      },
    );
    await tellInDm(client, deps, userId, done);
    await deps.home.publish(teamId, userId);
  });
}
