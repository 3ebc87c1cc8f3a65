/**
 * The "New task" modal, opened by the global shortcut, the message shortcut (quoting the message),
 * App Home's button and `/task` alone: its submission starts a task, or shows what to fix in it.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { TaskOptions } from "../../threads/options.ts";
import {
  ASK_SHORTCUT,
  FIELD,
  FIELD_ACTION,
  NEW_TASK_SHORTCUT,
  NEW_TASK_VIEW,
  quotePrompt,
  renderNewTaskModal,
} from "../../view/modal.ts";
import { channelMembership } from "../channel-directory.ts";
import { HOME_NEW_TASK } from "../../view/home.ts";
import {
  authorisedTeam,
  type Client,
  fileRefs,
  formErrors,
  type FormValues,
  fromSlack,
  type ListenerDeps,
  openView,
  Submission,
  TriggerAction,
} from "./surface.ts";

const Shortcut = TriggerAction.extend({
  channel: z.object({ id: z.string().min(1) }).nullish(),
  message: z.object({ text: z.string().optional() }).nullish(),
});

export function openNewTaskModal(
  client: Client,
  deps: ListenerDeps,
  trigger: string,
  seed: { channelId?: string | undefined; prompt?: string | undefined },
): Promise<boolean> {
  const view = renderNewTaskModal({ ...seed, choices: deps.choices });
  return openView(client, deps, trigger, view, "the New task modal");
}

export function register(app: App, deps: ListenerDeps): void {
  const openEmpty = async (args: { ack: () => Promise<void>; body: unknown; client: Client }) => {
    await args.ack();
    const parsed = TriggerAction.safeParse(args.body);
    if (parsed.success) await openNewTaskModal(args.client, deps, parsed.data.trigger_id, {});
  };
  app.shortcut(NEW_TASK_SHORTCUT, openEmpty);
  app.action(HOME_NEW_TASK, openEmpty);

  app.shortcut(ASK_SHORTCUT, async ({ ack, shortcut, client }) => {
    await ack();
    const parsed = Shortcut.safeParse(shortcut);
    if (!parsed.success) return;
    const text = fromSlack(parsed.data.message?.text ?? "");
    await openNewTaskModal(client, deps, parsed.data.trigger_id, {
      channelId: parsed.data.channel?.id,
      prompt: text.trim() === "" ? undefined : quotePrompt(text),
    });
  });

  app.view(NEW_TASK_VIEW, async ({ ack, body, client, context }) => {
    const parsed = Submission.safeParse(body);
    if (!parsed.success || !parsed.data.view.id) {
      await ack(formErrors({ [FIELD.prompt]: "That form looked malformed; please try again." }));
      return;
    }
    const form = readForm(parsed.data.view.state.values);
    const problem = promptProblem(deps, form);
    if (problem !== undefined) {
      await ack(formErrors({ [FIELD.prompt]: problem }));
      return;
    }
    await ack();
    const { user, view } = parsed.data;
    const channelId = form.channelId ?? (view.private_metadata || user.id);
    // The person may have picked a conversation the bot cannot post in: then tell them in
    // their DM with the app, which always works.
    const tell = async (text: string) => {
      await client.chat
        .postEphemeral({ channel: channelId, user: user.id, text })
        .catch(() => client.chat.postMessage({ channel: user.id, text }));
    };
    const refusal = await notAMember(client, deps, channelId, user.id);
    if (refusal !== undefined) {
      await client.chat.postMessage({ channel: user.id, text: refusal }).catch((err: unknown) => {
        deps.logger.warn({ err }, "could not say why a task was not started");
      });
      return;
    }
    await deps.coordinator.startTask(
      {
        teamId: authorisedTeam(context),
        channelId,
        userId: user.id,
        prompt: form.prompt,
        options: form.options,
        files: form.files,
        // Slack may deliver a submission twice (a double click, a retry): one view, one task.
        delivery: { kind: "trigger", id: `view:${view.id}` },
      },
      tell,
    );
  });
}

/**
 * Why a task from the modal may not go to `channelId`: the person is not in it (the bot would
 * join a public channel and post there for them), or Slack cannot say so. A DM is theirs.
 */
async function notAMember(
  client: Client,
  deps: ListenerDeps,
  channelId: string,
  userId: string,
): Promise<string | undefined> {
  if (channelId === userId || channelId.startsWith("D")) return undefined;
  const membership = await channelMembership(client, channelId, userId).catch((err: unknown) => {
    deps.logger.warn({ err }, "could not check the channel's members");
    return "unknown" as const;
  });
  if (membership === "not-member") {
    return `You are not a member of <#${channelId}>, so I did not start your task there. Join the channel and submit the form again, or pick a channel you are in (or none, for an answer in this DM).`;
  }
  if (membership === "unknown") {
    return `I could not confirm that you are a member of <#${channelId}>, so I did not start your task there. Run \`/task\` in that channel instead, or pick another one.`;
  }
  return undefined; // a member; or a channel the bot cannot see: posting there says what to do
}

function readForm(values: FormValues) {
  const field = (id: string) => values[id]?.[FIELD_ACTION];
  const name = (id: string) => {
    const v = field(id);
    const picked = (v?.selected_option?.value ?? v?.value ?? "").trim();
    return picked === "" ? undefined : picked;
  };
  const flags = new Set((field(FIELD.flags)?.selected_options ?? []).map((o) => o.value));
  const effort = name(FIELD.effort);
  const options: TaskOptions = {
    ...(name(FIELD.model) ? { model: name(FIELD.model) } : {}),
    ...(name(FIELD.agent) ? { agent: name(FIELD.agent) } : {}),
    ...(effort === "low" || effort === "medium" || effort === "high" ? { effort } : {}),
    ...(flags.has("thinking") ? { thinking: true } : {}),
    ...(flags.has("context") ? { context: true } : {}),
  };
  return {
    prompt: field(FIELD.prompt)?.value ?? "",
    channelId: field(FIELD.channel)?.selected_conversation ?? undefined,
    options,
    files: fileRefs(field(FIELD.files)?.files ?? []),
  };
}

/** What to fix in the prompt, shown under it. */
function promptProblem(deps: ListenerDeps, form: ReturnType<typeof readForm>): string | undefined {
  if (form.prompt.trim() === "" && form.files.length === 0) {
    return "Write what the agent should do, or attach a file below.";
  }
  const refusal = deps.coordinator.refuseNewTask(form.prompt, form.files.length > 0);
  // A modal shows plain text: drop the Markdown of the chat answer.
  return refusal?.replace(/[*`]/g, "").slice(0, 300);
}
