/** What listeners share: their dependencies, Slack's payload shapes and text, private answers. */
import type { AllMiddlewareArgs, App, RespondFn } from "@slack/bolt";
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

export interface ListenerDeps {
  readonly coordinator: TaskCoordinator;
  readonly logger: Logger;
  readonly choices: ModalChoices;
  readonly home: HomeTab;
  readonly records: RecordStore;
  readonly removal: WorkspaceRemoval;
  /** When the app can seal keys (ENCRYPTION_KEY is set). */
  readonly workspaceKeys?: WorkspaceKeys | undefined;
  readonly suggestedPrompts: readonly SuggestedPrompt[];
  readonly feedback: Pick<FeedbackRecorder, "record">;
  readonly audit?: Pick<AuditTrail, "record"> | undefined;
  /** Keeps a Workflow Builder step's execution with its run (its token sealed). */
  readonly workflowSteps: { keep(executionId: string, token: string): WorkflowStep };
}

/** What the Workspace settings modal needs for the workspace's service key. */
export interface WorkspaceKeys {
  readonly store: ServiceKeyStore;
  readonly checker: KeyChecker;
  /** Whether the workspace's tasks use TASK_API_KEY while it has none (see TASK_API_KEY_FOR). */
  readonly fallback: (teamId: string) => Promise<boolean>;
}

/** One Slack surface: a module whose `register` wires it onto the Bolt app. */
export interface Surface {
  register(app: App, deps: ListenerDeps): void;
}

export type Client = AllMiddlewareArgs["client"];

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

/** Who acted; with `trigger_id`, an action that may open a view. */
export const Person = z.object({ user: z.object({ id: z.string().min(1) }) });
export const TriggerAction = Person.extend({ trigger_id: z.string().min(1) });

export const ButtonPress = Person.extend({
  channel: z.object({ id: z.string() }).nullish(),
  container: z.object({ channel_id: z.string().optional() }).nullish(),
  actions: z.array(z.object({ value: z.string().optional() })).min(1),
});

export const Submission = Person.extend({
  view: z.object({
    id: z.string().min(1).optional(),
    private_metadata: z.string().optional(),
    state: z.object({ values: FormValues }),
  }),
});

export const formErrors = (errors: Record<string, string>) => ({
  response_action: "errors" as const,
  errors,
});

/** Opens a view; false when Slack refused it (logged as "could not open `what`"). */
export async function openView(
  client: Client,
  deps: Pick<ListenerDeps, "logger">,
  trigger: string,
  view: unknown,
  what: string,
): Promise<boolean> {
  try {
    await client.views.open({ trigger_id: trigger, view: view as never });
    return true;
  } catch (err) {
    deps.logger.warn({ err }, `could not open ${what}`);
    return false;
  }
}

/** Tells a person in their direct message with the app (a failure is only logged). */
export async function tellInDm(client: Client, deps: ListenerDeps, userId: string, text: string) {
  await client.chat
    .postMessage({ channel: userId, text })
    .catch((err: unknown) => deps.logger.debug({ err }, "could not send a direct message"));
}

/** A message only the person who acted sees, as an acknowledgement or `respond` body. */
export const privately = (text: string) => ({ response_type: "ephemeral" as const, text });

/** Tells the person who acted through the request's `response_url`. */
export const tellThrough =
  (respond: RespondFn): TellUser =>
  async (text) => {
    await respond({ ...privately(text), replace_original: false });
  };

/** The files of a payload that Slack described well enough to read (others are skipped). */
export function fileRefs(files: readonly unknown[] | undefined): SlackFileRef[] {
  return (files ?? []).flatMap((raw) => {
    const f = SlackFile.safeParse(raw).data;
    const url = f?.url_private_download || f?.url_private;
    if (!f) return [];
    return {
      id: f.id,
      // Named by `files.info` later when the event gave only the id.
      name: f.name || f.title || "",
      ...(typeof f.size === "number" ? { size: f.size } : {}),
      ...(f.mimetype ? { mimetype: f.mimetype } : {}),
      ...(url ? { url } : {}),
      ...(f.mode ? { mode: f.mode } : {}),
    };
  });
}
