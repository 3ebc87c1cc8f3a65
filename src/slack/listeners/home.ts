/**
 * App Home: the tab is published when a person opens it. Its buttons: New task (the modal), Edit
 * defaults (their personal defaults' form), and the forms that erase their own records or (for
 * admins) the workspace's, which say what they erased in a direct message and show the tab again.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { PERSONAL_DEFAULTS_VIEW } from "../../view/defaults.ts";
import {
  ERASE_MINE_VIEW,
  ERASE_WORKSPACE_CONFIRM,
  ERASE_WORKSPACE_VIEW,
  erasedMineText,
  eraseMineModal,
  eraseWorkspaceModal,
  HOME_EDIT_DEFAULTS,
  HOME_ERASE_MINE,
  HOME_ERASE_WORKSPACE,
  HOME_NEW_TASK,
} from "../../view/home.ts";
import { notAllowedModal } from "../../view/workspace-settings.ts";
import { isAdminOrNo } from "../admin-home.ts";
import { openDefaultsModal, submittedDefaults } from "./settings.ts";
import { openNewTaskModal } from "./modal.ts";
import {
  authorisedTeam,
  formErrors,
  type ListenerDeps,
  openView,
  Person,
  tellInDm,
  TriggerAction,
} from "./surface.ts";

const HomeOpened = z.object({
  event: z.object({ user: z.string().min(1), tab: z.string().optional() }),
});

/** The workspace erase form, its confirmation ticked. */
const WorkspaceErase = Person.extend({
  view: z.object({
    state: z.object({
      values: z.object({
        [ERASE_WORKSPACE_CONFIRM]: z.object({
          value: z.object({
            selected_options: z.array(z.object({ value: z.literal("erase") })).min(1),
          }),
        }),
      }),
    }),
  }),
});

function registerEraseMine(app: App, deps: ListenerDeps): void {
  const TRY_AGAIN = "Your records could not be erased just now; please try again in a minute.";

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
}

function registerEraseWorkspace(app: App, deps: ListenerDeps): void {
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
    const parsed = WorkspaceErase.safeParse(body);
    const teamId = authorisedTeam(context);
    const refuse = (error: string) => ack(formErrors({ [ERASE_WORKSPACE_CONFIRM]: error }));
    if (!parsed.success) {
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

export function register(app: App, deps: ListenerDeps): void {
  registerEraseMine(app, deps);
  registerEraseWorkspace(app, deps);
  app.event("app_home_opened", async ({ body, context }) => {
    const parsed = HomeOpened.safeParse(body);
    // The Messages tab sends this event too: only the Home tab is ours to draw.
    if (!parsed.success || (parsed.data.event.tab ?? "home") !== "home") return;
    await deps.home.publish(authorisedTeam(context), parsed.data.event.user);
  });

  app.action(HOME_NEW_TASK, async ({ ack, body, client }) => {
    await ack();
    const parsed = TriggerAction.safeParse(body);
    if (parsed.success) await openNewTaskModal(client, deps, parsed.data.trigger_id, {});
  });

  app.action(HOME_EDIT_DEFAULTS, async ({ ack, body, client, context }) => {
    await ack();
    const parsed = TriggerAction.safeParse(body);
    if (!parsed.success) return;
    const { user, trigger_id: trigger } = parsed.data;
    const current = await deps.coordinator.preferences
      .defaults(authorisedTeam(context), { kind: "user", userId: user.id })
      .catch((err: unknown) => deps.logger.warn({ err }, "could not read the personal defaults"));
    if (current) await openDefaultsModal(client, deps, trigger, { kind: "user" }, current);
  });

  app.view(PERSONAL_DEFAULTS_VIEW, async ({ ack, body, context }) => {
    const read = await submittedDefaults(body, ack, "user");
    if (!read) return;
    const teamId = authorisedTeam(context);
    const { userId } = read;
    try {
      await deps.coordinator.preferences.saveDefaults(
        teamId,
        { kind: "user", userId },
        read.defaults,
      );
    } catch (err) {
      deps.logger.warn({ err }, "could not save the personal defaults");
      const error = "Your defaults could not be saved right now; please try again.";
      await ack(formErrors({ model: error }));
      return;
    }
    await ack();
    await deps.home.publish(teamId, userId);
  });
}
