/**
 * What a listener module is: `register(app, deps)` wires one Slack surface onto the Bolt app;
 * and what listeners share: their dependencies, Slack's text decoding, private answers.
 */
import type { App, RespondFn } from "@slack/bolt";
import type { Logger } from "pino";
import { z } from "zod";
import type { SuggestedPrompt } from "../../config/prompts.ts";
import type { FeedbackRecorder } from "../../feedback/feedback.ts";
import type { TaskCoordinator, TellUser } from "../../threads/coordinator.ts";
import type { SlackFileRef } from "../../runs/ports.ts";
import type { KeyChecker } from "../../service/client.ts";
import type { AuditTrail } from "../../store/audit.ts";
import type { ServiceKeyStore } from "../../store/service-keys.ts";
import type { RecordStore, WorkflowStep } from "../../store/types.ts";
import type { ModalChoices } from "../../view/modal.ts";
import { SlackFile } from "../file-source.ts";
import type { HomeTab } from "../home-tab.ts";
import type { WorkspaceRemoval } from "../workspace-removal.ts";

/** What a listener gets: listeners parse Slack's payload, acknowledge, and call the coordinator. */
export interface ListenerDeps {
  readonly coordinator: TaskCoordinator;
  readonly logger: Logger;
  /** The models and agents the New task modal offers (free text when empty). */
  readonly choices: ModalChoices;
  readonly home: HomeTab;
  /** The workspaces' records (their usage policy…). */
  readonly records: RecordStore;
  readonly removal: WorkspaceRemoval;
  /** Each workspace's own service key, when the app can seal them (ENCRYPTION_KEY is set). */
  readonly workspaceKeys?: WorkspaceKeys | undefined;
  /** What Slack's agent view suggests when a person opens the app (TASK_SUGGESTED_PROMPTS). */
  readonly suggestedPrompts: readonly SuggestedPrompt[];
  readonly feedback: Pick<FeedbackRecorder, "record">;
  /** Where admin actions are written (keys, usage policy, channel defaults). */
  readonly audit?: Pick<AuditTrail, "record"> | undefined;
  /** How a Workflow Builder step's execution is kept with its run (its token sealed). */
  readonly workflowSteps: { keep(executionId: string, token: string): WorkflowStep };
}

/** What the Workspace settings modal needs for the workspace's service key. */
export interface WorkspaceKeys {
  readonly store: ServiceKeyStore;
  /** Asks the service whether it takes a key, before it is saved. */
  readonly checker: KeyChecker;
  /** Whether the workspace's tasks use TASK_API_KEY while it has none (see TASK_API_KEY_FOR). */
  readonly fallback: (teamId: string) => Promise<boolean>;
}

/** One Slack surface (a slash command, an event, interactive components, …). */
export interface Surface {
  register(app: App, deps: ListenerDeps): void;
}

/** The workspace Bolt authorised the payload for (never one the payload names: gate/team.ts). */
export function authorisedTeam(context: { readonly teamId?: string | undefined }): string {
  if (!context.teamId) throw new Error("a payload reached a listener without an authorised team");
  return context.teamId;
}

/** Slack escapes &, < and > in what people type; the service must get what they typed. */
export const fromSlack = (s: string): string =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** A form's submitted `view.state.values`: block id → action id → one input's state, whatever its element. */
export const FormValues = z.record(
  z.string(),
  z.record(
    z.string(),
    z.object({
      value: z.string().nullish(),
      selected_option: z.object({ value: z.string() }).nullish(),
      selected_options: z.array(z.object({ value: z.string() })).nullish(),
      selected_conversation: z.string().nullish(),
      selected_conversations: z.array(z.string()).nullish(),
      files: z.array(z.unknown()).nullish(),
    }),
  ),
);
export type FormValues = z.infer<typeof FormValues>;

/** A message only the person who acted sees, as an acknowledgement or `respond` body. */
export const privately = (text: string) => ({ response_type: "ephemeral" as const, text });

/** Tells the person who acted through the request's `response_url` (commands, actions). */
export const tellThrough =
  (respond: RespondFn): TellUser =>
  async (text) => {
    await respond({ ...privately(text), replace_original: false });
  };

/** The files of a payload that Slack described well enough to read (others are skipped). */
export function fileRefs(files: readonly unknown[] | undefined): SlackFileRef[] {
  const refs: SlackFileRef[] = [];
  for (const raw of files ?? []) {
    const f = SlackFile.safeParse(raw).data;
    if (!f) continue;
    const url = f.url_private_download || f.url_private;
    refs.push({
      id: f.id,
      // Named by `files.info` later when the event gave only the id.
      name: f.name || f.title || "",
      ...(typeof f.size === "number" ? { size: f.size } : {}),
      ...(f.mimetype ? { mimetype: f.mimetype } : {}),
      ...(url ? { url } : {}),
      ...(f.mode ? { mode: f.mode } : {}),
    });
  }
  return refs;
}
