/**
 * Workspace settings, for workspace admins and owners only: the modal opened from the App Home
 * button or the one `/task settings` offers them, and its submission, which checks a new service
 * API key with the service before sealing and saving it. A key is never logged or shown back.
 */
import type { AllMiddlewareArgs, App, RespondFn } from "@slack/bolt";
import { z } from "zod";
import type { ServiceKeyState } from "../../store/service-keys.ts";
import { isWorkspaceAdmin } from "../admin-home.ts";
import {
  keySection,
  type KeyStatus,
  notAllowedModal,
  OPEN_WORKSPACE_SETTINGS,
  REMOVE_KEY,
  SERVICE_KEY_FIELD,
  WORKSPACE_SETTINGS_VIEW,
  workspaceSettingsModal,
  workspaceSettingsOffer,
} from "../../view/workspace-settings.ts";
import type { ListenerDeps, WorkspaceKeys } from "./surface.ts";

type Client = AllMiddlewareArgs["client"];

/** How long the key check may take: a modal's submission must be answered within 3 seconds. */
const CHECK_TIMEOUT_MS = 2500;

const NOT_ADMIN = "Only workspace admins and owners can change the app's workspace settings.";

const Person = z.object({
  user: z.object({ id: z.string().min(1), team_id: z.string().optional() }),
  team: z.object({ id: z.string().min(1) }).nullish(),
});

const OpenAction = Person.extend({ trigger_id: z.string().min(1) });

const Submission = Person.extend({
  view: z.object({
    state: z.object({
      values: z.record(
        z.string(),
        z.record(
          z.string(),
          z.object({
            value: z.string().nullish(),
            selected_options: z.array(z.object({ value: z.string() })).nullish(),
          }),
        ),
      ),
    }),
  }),
});

const teamOf = (p: z.infer<typeof Person>) => p.team?.id ?? p.user.team_id ?? "";

/** Whether Slack says the person administers the workspace (asked with the listener's client). */
async function isAdmin(
  client: Client,
  deps: Pick<ListenerDeps, "logger">,
  userId: string,
): Promise<boolean> {
  return isWorkspaceAdmin(client, userId).catch((err: unknown) => {
    deps.logger.warn({ err }, "could not ask Slack whether someone is a workspace admin");
    return false;
  });
}

/** What the modal says of a stored key. */
function statusOf(stored: ServiceKeyState, fallback: boolean): KeyStatus {
  if (stored.state === "set") {
    const { lastFour, setBy, setAt } = stored;
    return { state: "set", lastFour, setBy, setAt };
  }
  if (stored.state === "unreadable") return { state: "unreadable", lastFour: stored.lastFour };
  return { state: "none", fallback };
}

/** Opens the modal for an admin (the not-allowed notice for anyone else); false if it failed. */
export async function openWorkspaceSettings(
  client: Client,
  deps: ListenerDeps,
  keys: WorkspaceKeys,
  req: { readonly teamId: string; readonly userId: string; readonly trigger: string },
): Promise<boolean> {
  try {
    if (!(await isAdmin(client, deps, req.userId))) {
      await client.views.open({ trigger_id: req.trigger, view: notAllowedModal() as never });
      return true;
    }
    const stored = await keys.store.get(req.teamId);
    const view = workspaceSettingsModal({
      keySection: keySection(statusOf(stored, keys.fallback)),
    });
    await client.views.open({ trigger_id: req.trigger, view: view as never });
    return true;
  } catch (err) {
    deps.logger.warn({ err }, "could not open the workspace settings");
    return false;
  }
}

/** `/task settings` by an admin: a private message with the Workspace settings button too. */
export async function offerWorkspaceSettings(
  client: Client,
  deps: ListenerDeps,
  userId: string,
  respond: RespondFn,
): Promise<void> {
  if (!deps.workspaceKeys || !(await isAdmin(client, deps, userId))) return;
  await respond({
    response_type: "ephemeral",
    replace_original: false,
    text: "Workspace settings (admins): the workspace's Task service API key.",
    blocks: workspaceSettingsOffer() as never,
  }).catch((err: unknown) => deps.logger.debug({ err }, "could not offer the workspace settings"));
}

/** What a submission asks: a new key, removing the key, or no change. */
type KeyChange = { kind: "set"; key: string } | { kind: "remove" } | { kind: "none" };

function readChange(
  values: z.infer<typeof Submission>["view"]["state"]["values"],
): KeyChange | { error: string } {
  const key = (values[SERVICE_KEY_FIELD.key]?.value?.value ?? "").trim();
  const remove = (values[SERVICE_KEY_FIELD.remove]?.value?.selected_options ?? []).some(
    (o) => o.value === REMOVE_KEY,
  );
  if (key !== "" && remove) return { error: "Either paste a new key or remove the key, not both." };
  if (remove) return { kind: "remove" };
  if (key === "") return { kind: "none" };
  if (/\s/.test(key) || key.length < 8) {
    return { error: "That does not look like an API key: paste the whole key, without spaces." };
  }
  return { kind: "set", key };
}

/** Why a key cannot be saved (for the key field), or undefined once it is checked and saved. */
async function checkAndSave(
  keys: WorkspaceKeys,
  deps: ListenerDeps,
  teamId: string,
  userId: string,
  key: string,
): Promise<{ readonly error: string } | { readonly lastFour: string }> {
  const check = await keys.checker
    .checkKey(key, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) })
    .catch((): { error: string } => ({ error: "no answer in time" }));
  if (check === "refused") {
    return {
      error:
        "The service refused this key (401): check that you pasted all of it and that it is still active. Nothing was saved.",
    };
  }
  if (check !== "valid") {
    return {
      error: `The service could not be reached to check this key (${check.error}). Nothing was saved; please try again in a minute.`,
    };
  }
  try {
    return { lastFour: await keys.store.set(teamId, key, userId) };
  } catch (err) {
    deps.logger.warn({ err, teamId }, "could not save a workspace's service key");
    return { error: "The key could not be saved right now; please try again." };
  }
}

/** Tells the admin privately (the app's direct message with them). */
async function confirm(client: Client, deps: ListenerDeps, userId: string, text: string) {
  await client.chat
    .postMessage({ channel: userId, text })
    .catch((err: unknown) =>
      deps.logger.debug({ err }, "could not confirm the workspace settings"),
    );
}

export function register(app: App, deps: ListenerDeps): void {
  const keys = deps.workspaceKeys;
  if (!keys) return; // no encryption key: workspaces use the app's key, nothing to set

  app.action(OPEN_WORKSPACE_SETTINGS, async ({ ack, body, client }) => {
    await ack();
    const parsed = OpenAction.safeParse(body);
    if (!parsed.success) return;
    const req = { teamId: teamOf(parsed.data), userId: parsed.data.user.id };
    await openWorkspaceSettings(client, deps, keys, { ...req, trigger: parsed.data.trigger_id });
  });

  app.view(WORKSPACE_SETTINGS_VIEW, async ({ ack, body, client }) => {
    const parsed = Submission.safeParse(body);
    const field = SERVICE_KEY_FIELD.key;
    if (!parsed.success) {
      await ack({ response_action: "errors", errors: { [field]: "That form looked malformed." } });
      return;
    }
    const teamId = teamOf(parsed.data);
    const userId = parsed.data.user.id;
    // The modal may be old, or forged: whoever submits it must be an admin now.
    if (!(await isAdmin(client, deps, userId))) {
      await ack({ response_action: "errors", errors: { [field]: NOT_ADMIN } });
      return;
    }
    const change = readChange(parsed.data.view.state.values);
    if ("error" in change) {
      await ack({ response_action: "errors", errors: { [field]: change.error } });
      return;
    }
    if (change.kind === "none") {
      await ack();
      return;
    }
    if (change.kind === "remove") {
      const removed = await keys.store.delete(teamId).then(
        () => true,
        (err: unknown) => {
          deps.logger.warn({ err, teamId }, "could not remove a workspace's service key");
          return false;
        },
      );
      if (!removed) {
        const error = "The key could not be removed right now; please try again.";
        await ack({ response_action: "errors", errors: { [field]: error } });
        return;
      }
      await ack();
      const then = keys.fallback ? "tasks use the app's default key" : "tasks cannot start";
      await confirm(
        client,
        deps,
        userId,
        `The workspace's Task service API key is removed: ${then}.`,
      );
      return;
    }
    const saved = await checkAndSave(keys, deps, teamId, userId, change.key);
    if ("error" in saved) {
      await ack({ response_action: "errors", errors: { [field]: saved.error } });
      return;
    }
    await ack();
    deps.logger.info({ teamId, by: userId }, "a workspace's service key was set");
    await confirm(
      client,
      deps,
      userId,
      `The workspace's Task service API key ending in ${saved.lastFour} is saved: tasks started in this workspace now use it.`,
    );
  });
}
