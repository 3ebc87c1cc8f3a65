/**
 * Workspace settings, for admins and owners only: the workspace's Task service API key (when the
 * app can seal keys) and its usage policy. Saving checks again who submits, and a new key with the
 * service. A key is never logged or shown back (the audit trail names its last four characters).
 */
import type { App, RespondFn } from "@slack/bolt";
import {
  DEFAULT_USAGE_POLICY,
  getUsagePolicy,
  putUsagePolicy,
  UsagePolicy,
} from "../../store/usage-policy.ts";
import type { ServiceKeyState } from "../../store/service-keys.ts";
import {
  readUsagePolicy,
  USAGE_FIELD,
  usagePolicyBlocks,
  type UserGroupOption,
  type ViewStateValues,
} from "../../view/usage-policy.ts";
import {
  appKeySection,
  type KeyStatus,
  keySection,
  notAllowedModal,
  OPEN_WORKSPACE_SETTINGS,
  REMOVE_KEY,
  SERVICE_KEY_FIELD,
  WORKSPACE_SETTINGS_VIEW,
  workspaceSettingsModal,
  workspaceSettingsOffer,
} from "../../view/workspace-settings.ts";
import { isAdminOrNo } from "../admin-home.ts";
import { listUserGroups } from "../user-groups.ts";
import {
  authorisedTeam,
  type Client,
  formErrors,
  type FormValues,
  type ListenerDeps,
  privately,
  Submission,
  tellInDm,
  TriggerAction,
  type WorkspaceKeys,
} from "./surface.ts";

const NOT_ADMIN = "Only workspace admins and owners can change the app's workspace settings.";

/** How long the key check may take: a modal's submission must be answered within 3 seconds. */
const CHECK_TIMEOUT_MS = 2500;

type KeyChange = { kind: "set"; key: string } | { kind: "remove" } | { kind: "none" };

/** What the modal says of a stored key (never the key). */
function keyStatusOf(stored: ServiceKeyState, fallback: boolean): KeyStatus {
  if (stored.state === "set") {
    const { lastFour, setBy, setAt } = stored;
    return { state: "set", lastFour, setBy, setAt };
  }
  if (stored.state === "unreadable") return { state: "unreadable", lastFour: stored.lastFour };
  return { state: "none", fallback };
}

function readKeyChange(values: ViewStateValues): KeyChange | { error: string } {
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

/** Does what a submission asks of the key: the admin's confirmation, or the key field's error. */
export async function applyKeyChange(
  keys: WorkspaceKeys,
  deps: Pick<ListenerDeps, "logger" | "audit">,
  req: { readonly teamId: string; readonly userId: string },
  change: KeyChange,
): Promise<{ readonly error: string } | { readonly confirm?: string }> {
  if (change.kind === "none") return {};
  const by = { who: req.userId, workspace: req.teamId };
  if (change.kind === "remove") {
    try {
      await keys.store.delete(req.teamId);
    } catch (err) {
      deps.logger.warn({ err, teamId: req.teamId }, "could not remove a workspace's service key");
      return { error: "The key could not be removed right now; please try again." };
    }
    await deps.audit?.record({ what: "service_key.removed", ...by });
    // The key is gone either way: an unreadable lending record still gets the admin an answer.
    const lent = await keys.fallback(req.teamId).catch((err: unknown) => {
      deps.logger.warn({ err, teamId: req.teamId }, "could not tell whether TASK_API_KEY is lent");
      return undefined;
    });
    const then =
      lent === undefined
        ? "tasks use the app's default key if the operator lends it to this workspace, else they cannot start"
        : lent
          ? "tasks use the app's default key"
          : "tasks cannot start";
    return { confirm: `The workspace's Task service API key is removed: ${then}.` };
  }
  const check = await keys.checker
    .checkKey(change.key, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) })
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
    const lastFour = await keys.store.set(req.teamId, change.key, req.userId);
    deps.logger.info({ teamId: req.teamId, by: req.userId }, "a workspace's service key was set");
    await deps.audit?.record({
      what: "service_key.set",
      ...by,
      detail: `key ending in ${lastFour}`,
    });
    return {
      confirm: `The workspace's Task service API key ending in ${lastFour} is saved: tasks started in this workspace now use it.`,
    };
  } catch (err) {
    deps.logger.warn({ err, teamId: req.teamId }, "could not save a workspace's service key");
    return { error: "The key could not be saved right now; please try again." };
  }
}

async function settingsModal(client: Client, deps: ListenerDeps, teamId: string) {
  const keys = deps.workspaceKeys;
  const [stored, lent, policy, groups] = await Promise.all([
    keys?.store.get(teamId),
    keys?.fallback(teamId).catch((err: unknown) => {
      deps.logger.warn({ err }, "could not tell whether TASK_API_KEY is lent; the form says not");
      return false;
    }),
    getUsagePolicy(deps.records, teamId).catch((err: unknown) => {
      // An unreadable policy refuses every task: the admin saves a fresh one from here.
      deps.logger.error({ err }, "could not read the usage policy; the form shows the default");
      return DEFAULT_USAGE_POLICY;
    }),
    listUserGroups(client).catch((err: unknown): UserGroupOption[] => {
      deps.logger.warn({ err }, "could not list the workspace's user groups");
      return [];
    }),
  ]);
  return workspaceSettingsModal({
    keySection: keys && stored ? keySection(keyStatusOf(stored, lent === true)) : appKeySection(),
    extraSections: usagePolicyBlocks(policy, groups),
  });
}

/** `/task settings` by an admin: a private message with the Workspace settings button too. */
export async function offerWorkspaceSettings(
  client: Client,
  deps: ListenerDeps,
  req: { readonly teamId: string; readonly userId: string },
  respond: RespondFn,
): Promise<void> {
  if (!(await isAdminOrNo(client, deps.logger, req))) return;
  await respond({
    ...privately("Workspace settings (admins): the workspace's Task service key and usage policy."),
    replace_original: false,
    blocks: workspaceSettingsOffer() as never,
  }).catch((err: unknown) => deps.logger.debug({ err }, "could not offer the workspace settings"));
}

/** Saves the key (checked with the service first), then the policy: errors, or what to confirm. */
async function save(
  deps: ListenerDeps,
  req: { readonly teamId: string; readonly userId: string },
  values: FormValues,
): Promise<{ errors: Record<string, string> } | { confirm: string | undefined }> {
  const keys = deps.workspaceKeys;
  const policy = readUsagePolicy(values);
  const change = keys ? readKeyChange(values) : ({ kind: "none" } as const);
  const errors = {
    ...("errors" in policy ? policy.errors : {}),
    ...("error" in change ? { [SERVICE_KEY_FIELD.key]: change.error } : {}),
  };
  if ("errors" in policy || "error" in change) return { errors };
  // The key first: a key the service refuses leaves everything as it was.
  const keyDone = keys ? await applyKeyChange(keys, deps, req, change) : {};
  if ("error" in keyDone) return { errors: { [SERVICE_KEY_FIELD.key]: keyDone.error } };
  // An unreadable policy counts as changed by a save.
  const before = await getUsagePolicy(deps.records, req.teamId).catch(() => undefined);
  try {
    await putUsagePolicy(deps.records, req.teamId, policy.policy);
  } catch (err) {
    deps.logger.warn({ err }, "could not save the usage policy");
    const error = "The usage policy could not be saved right now; please try again.";
    return { errors: { [USAGE_FIELD.quota]: error } };
  }
  deps.logger.info({ team: req.teamId, user: req.userId }, "usage policy saved");
  // Both as the store keeps them (its fields in one order).
  if (JSON.stringify(before) !== JSON.stringify(UsagePolicy.parse(policy.policy))) {
    const detail = describePolicy(policy.policy);
    const by = { who: req.userId, workspace: req.teamId };
    await deps.audit?.record({ what: "usage_policy.changed", ...by, detail });
  }
  return { confirm: keyDone.confirm };
}

/** A policy in a few words for the audit trail (counts, never names). */
function describePolicy(policy: UsagePolicy): string {
  const { who, where, perUserPerHour: quota } = policy;
  return [
    who.kind === "everyone" ? "everyone" : `members of ${who.groupIds.length} group(s)`,
    where.kind === "all" ? "every channel" : `${where.channelIds.length} channel(s)`,
    quota === 0 ? "no hourly quota" : `${quota} per person per hour`,
    policy.joinPublicChannels ? "joins public channels" : "joins no channel by itself",
  ].join("; ");
}

export function register(app: App, deps: ListenerDeps): void {
  app.action(OPEN_WORKSPACE_SETTINGS, async ({ ack, body, client, context }) => {
    await ack();
    const parsed = TriggerAction.safeParse(body);
    if (!parsed.success) return;
    const req = { teamId: authorisedTeam(context), userId: parsed.data.user.id };
    // The modal for an admin, the not-allowed notice for anyone else.
    try {
      const view = (await isAdminOrNo(client, deps.logger, req))
        ? await settingsModal(client, deps, req.teamId)
        : notAllowedModal();
      await client.views.open({ trigger_id: parsed.data.trigger_id, view: view as never });
    } catch (err) {
      deps.logger.warn({ err }, "could not open the workspace settings");
    }
  });

  app.view(WORKSPACE_SETTINGS_VIEW, async ({ ack, body, client, context }) => {
    const parsed = Submission.safeParse(body);
    // Errors about the whole form go on its first field.
    const field = deps.workspaceKeys ? SERVICE_KEY_FIELD.key : USAGE_FIELD.who;
    if (!parsed.success) {
      await ack(formErrors({ [field]: "That form looked malformed." }));
      return;
    }
    const req = { teamId: authorisedTeam(context), userId: parsed.data.user.id };
    // The modal may be old, or forged: whoever submits it must be an admin now.
    if (!(await isAdminOrNo(client, deps.logger, req))) {
      await ack(formErrors({ [field]: NOT_ADMIN }));
      return;
    }
    const saved = await save(deps, req, parsed.data.view.state.values);
    if ("errors" in saved) {
      await ack(formErrors(saved.errors));
      return;
    }
    await ack();
    if (saved.confirm) await tellInDm(client, deps, req.userId, saved.confirm);
    await deps.home.publish(req.teamId, req.userId);
  });
}
