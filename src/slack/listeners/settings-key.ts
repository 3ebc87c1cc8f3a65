/**
 * The service-key part of the Workspace settings modal: what a submission asks of the key
 * (a new one, removing it, nothing), checking a new key with the service before sealing and
 * saving it, and what the modal says of the stored key. A key is never logged or shown back
 * (the audit trail names its last four characters).
 */
import type { ServiceKeyState } from "../../store/service-keys.ts";
import type { ViewStateValues } from "../../view/usage-policy.ts";
import { type KeyStatus, REMOVE_KEY, SERVICE_KEY_FIELD } from "../../view/workspace-settings.ts";
import type { ListenerDeps, WorkspaceKeys } from "./surface.ts";

/** How long the key check may take: a modal's submission must be answered within 3 seconds. */
const CHECK_TIMEOUT_MS = 2500;

/** What a submission asks of the key. */
export type KeyChange = { kind: "set"; key: string } | { kind: "remove" } | { kind: "none" };

/** What the modal says of a stored key. */
export function keyStatusOf(stored: ServiceKeyState, fallback: boolean): KeyStatus {
  if (stored.state === "set") {
    const { lastFour, setBy, setAt } = stored;
    return { state: "set", lastFour, setBy, setAt };
  }
  if (stored.state === "unreadable") return { state: "unreadable", lastFour: stored.lastFour };
  return { state: "none", fallback };
}

export function readKeyChange(values: ViewStateValues): KeyChange | { error: string } {
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

/**
 * Does what the submission asks of the key: the confirmation to send the admin, or the error
 * to show in the key field (nothing changed then).
 */
export async function applyKeyChange(
  keys: WorkspaceKeys,
  deps: Pick<ListenerDeps, "logger" | "audit">,
  req: { readonly teamId: string; readonly userId: string },
  change: KeyChange,
): Promise<{ readonly error: string } | { readonly confirm?: string }> {
  if (change.kind === "none") return {};
  if (change.kind === "remove") {
    try {
      await keys.store.delete(req.teamId);
    } catch (err) {
      deps.logger.warn({ err, teamId: req.teamId }, "could not remove a workspace's service key");
      return { error: "The key could not be removed right now; please try again." };
    }
    const by = { who: req.userId, workspace: req.teamId };
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
    const detail = `key ending in ${lastFour}`;
    await deps.audit?.record({
      what: "service_key.set",
      who: req.userId,
      workspace: req.teamId,
      detail,
    });
    return {
      confirm: `The workspace's Task service API key ending in ${lastFour} is saved: tasks started in this workspace now use it.`,
    };
  } catch (err) {
    deps.logger.warn({ err, teamId: req.teamId }, "could not save a workspace's service key");
    return { error: "The key could not be saved right now; please try again." };
  }
}
