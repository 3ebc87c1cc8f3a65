/** The "Workspace settings" modal for admins: the service key (only its last four shown), and more. */
import { type Block, button, form, input, modal, plain, section, slackDate } from "./blocks.ts";

export const WORKSPACE_SETTINGS_VIEW = "workspace_settings";
export const OPEN_WORKSPACE_SETTINGS = "open_workspace_settings";
export const SERVICE_KEY_FIELD = { key: "service_key", remove: "service_key_remove" } as const;
export const REMOVE_KEY = "remove";

/** What the modal says of the workspace's key (never the key itself). */
export type KeyStatus = Readonly<
  | { state: "set"; lastFour: string; setBy: string; setAt: number }
  | { state: "none"; fallback: boolean } // fallback: the app's default key (TASK_API_KEY) serves
  | { state: "unreadable"; lastFour: string | undefined }
>;

export function describeKeyStatus(status: KeyStatus): string {
  switch (status.state) {
    case "set":
      return `A key ending in ${status.lastFour} is set (by <@${status.setBy}>, ${slackDate(status.setAt, false)}).`;
    case "none":
      return status.fallback
        ? "No key set; tasks use the app's default key."
        : "No key: tasks cannot start until an admin sets one.";
    case "unreadable":
      return `:warning: The key${status.lastFour ? ` ending in ${status.lastFour}` : ""} can no longer be read (the app's encryption keys changed, or it is not stored in the app's sealed format): tasks cannot start until it is set again.`;
  }
}

/** The key's section: what is set, a field for a new key (never pre-filled), and removal. */
export function keySection(status: KeyStatus): Block[] {
  const stored = status.state !== "none";
  return [
    { type: "header", text: plain("Task service API key") },
    section(
      `${describeKeyStatus(status)}\nTasks started in this workspace are charged to the account of this key.`,
      "service_key_status",
    ),
    input(
      SERVICE_KEY_FIELD.key,
      stored ? "New key" : "Key",
      {
        type: "plain_text_input",
        max_length: 500,
        placeholder: plain("Paste the key from the service's account settings (API keys)"),
      },
      {
        optional: true,
        hint: plain(
          "Checked with the service before it is saved, then stored encrypted. Only its last four characters are ever shown.",
        ),
      },
    ),
    ...(stored
      ? [
          input(
            SERVICE_KEY_FIELD.remove,
            "Remove",
            {
              type: "checkboxes",
              options: [{ text: plain("Remove the workspace's key"), value: REMOVE_KEY }],
            },
            { optional: true },
          ),
        ]
      : []),
  ];
}

/** The key's section when the app cannot seal keys (no ENCRYPTION_KEY): the app's own key. */
export function appKeySection(): Block[] {
  return [
    { type: "header", text: plain("Task service API key") },
    section(
      "Tasks use the app's Task service API key, set by whoever runs the app. (For each workspace to set its own, the app needs an `ENCRYPTION_KEY`.)",
      "service_key_status",
    ),
  ];
}

export function workspaceSettingsModal(parts: {
  readonly keySection: readonly Block[];
  readonly extraSections?: readonly Block[];
}): Block {
  const more = parts.extraSections ?? [];
  const extra = more.length > 0 ? [{ type: "divider" }, ...more] : [];
  return form(WORKSPACE_SETTINGS_VIEW, "Workspace settings", "Save", [
    ...parts.keySection,
    ...extra,
  ]);
}

export const notAllowedModal = (): Block =>
  modal("Workspace settings", [
    section("Only workspace admins and owners can change the app's workspace settings."),
  ]);

/** The button that opens the modal (App Home and `/task settings`, shown to admins). */
export const workspaceSettingsButton = (): Block =>
  button(OPEN_WORKSPACE_SETTINGS, "Workspace settings");

export function workspaceSettingsOffer(): Block[] {
  return [
    section(
      "*Workspace settings* (admins): the workspace's Task service API key and usage policy.",
    ),
    { type: "actions", block_id: "workspace_settings", elements: [workspaceSettingsButton()] },
  ];
}
