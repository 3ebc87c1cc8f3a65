/**
 * App Home: the Home tab is published when a person opens it; its New task button opens the New
 * task modal, its Edit defaults button the form of their personal defaults (saved, then shown).
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import { PERSONAL_DEFAULTS_VIEW } from "../../view/defaults.ts";
import { HOME_EDIT_DEFAULTS, HOME_NEW_TASK } from "../../view/home.ts";
import { DefaultsSubmission, openDefaultsModal, readDefaults } from "./defaults-form.ts";
import { openNewTaskModal } from "./modal.ts";
import { authorisedTeam, type ListenerDeps } from "./surface.ts";

const HomeOpened = z.object({
  event: z.object({ user: z.string().min(1), tab: z.string().optional() }),
});

const ViewAction = z.object({
  trigger_id: z.string().min(1),
  user: z.object({ id: z.string().min(1) }),
});

export function register(app: App, deps: ListenerDeps): void {
  app.event("app_home_opened", async ({ body, context }) => {
    const parsed = HomeOpened.safeParse(body);
    // The Messages tab sends this event too: only the Home tab is ours to draw.
    if (!parsed.success || (parsed.data.event.tab ?? "home") !== "home") return;
    await deps.home.publish(authorisedTeam(context), parsed.data.event.user);
  });

  app.action(HOME_NEW_TASK, async ({ ack, body, client }) => {
    await ack();
    const parsed = ViewAction.safeParse(body);
    if (parsed.success) await openNewTaskModal(client, deps, parsed.data.trigger_id, {});
  });

  app.action(HOME_EDIT_DEFAULTS, async ({ ack, body, client, context }) => {
    await ack();
    const parsed = ViewAction.safeParse(body);
    if (!parsed.success) return;
    const { user, trigger_id: trigger } = parsed.data;
    const teamId = authorisedTeam(context);
    const current = await deps.coordinator.preferences
      .defaults(teamId, { kind: "user", userId: user.id })
      .catch((err: unknown) => {
        deps.logger.warn({ err }, "could not read the personal defaults");
        return undefined;
      });
    if (current) await openDefaultsModal(client, deps, trigger, { kind: "user" }, current);
  });

  app.view(PERSONAL_DEFAULTS_VIEW, async ({ ack, body, context }) => {
    const parsed = DefaultsSubmission.safeParse(body);
    if (!parsed.success) {
      await ack({ response_action: "errors", errors: { model: "That form looked malformed." } });
      return;
    }
    const read = readDefaults(parsed.data.view.state.values);
    if ("errors" in read) {
      await ack({ response_action: "errors", errors: read.errors });
      return;
    }
    const teamId = authorisedTeam(context);
    const userId = parsed.data.user.id;
    try {
      await deps.coordinator.preferences.saveDefaults(
        teamId,
        { kind: "user", userId },
        read.defaults,
      );
    } catch (err) {
      deps.logger.warn({ err }, "could not save the personal defaults");
      await ack({
        response_action: "errors",
        errors: { model: "Your defaults could not be saved right now; please try again." },
      });
      return;
    }
    await ack();
    await deps.home.publish(teamId, userId);
  });
}
