/**
 * History, Files and Continue… under a finished answer, and the views they open. A view opens at
 * once with "Loading…" (a trigger lasts 3 seconds), filled when the service answers.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { SlackThreadKey } from "../../store/types.ts";
import {
  CONTINUE_VIEW,
  decodeTaskRef,
  decodeViewState,
  renderContinueView,
  renderFilesView,
  renderHistoryView,
  renderLoadingView,
  renderViewError,
  TASK_ACTION,
  type TaskRef,
  type ViewState,
} from "../../view/task-views.ts";
import {
  authorisedTeam,
  ButtonPress,
  type Client,
  fileRefs,
  formErrors,
  type ListenerDeps,
  openView,
  Submission,
  tellThrough,
} from "./surface.ts";

const ActionBody = ButtonPress.extend({
  trigger_id: z.string().min(1),
  view: z.object({ id: z.string(), private_metadata: z.string().optional() }).nullish(),
});
type ActionBody = z.infer<typeof ActionBody>;

const keyOf = (teamId: string, ref: TaskRef): SlackThreadKey => ({ teamId, ...ref });

/** The thread a message button is about, only if it was clicked in that thread's channel. */
function messageTarget(body: ActionBody): TaskRef | undefined {
  const ref = decodeTaskRef(body.actions[0]?.value);
  const channel = body.channel?.id ?? body.container?.channel_id;
  // Slack delivers a click only to people who see the message: the channel is theirs to see.
  return ref && channel === ref.channelId ? ref : undefined;
}

/**
 * The state a button inside a History or Files view asks for, about the view's own thread (its
 * metadata is the app's: Slack returns it, signed, to the person the view belongs to).
 */
function viewTarget(body: ActionBody): ViewState | undefined {
  const wanted = decodeViewState(body.actions[0]?.value);
  const shown = decodeViewState(body.view?.private_metadata);
  const same = wanted?.channelId === shown?.channelId && wanted?.threadTs === shown?.threadTs;
  return shown && same ? wanted : undefined;
}

const TITLE = { history: "Task history", files: "Task files" } as const;

async function fill(
  deps: ListenerDeps,
  client: Client,
  viewId: string,
  state: ViewState,
  teamId: string,
  userId: string,
) {
  const { threads } = deps.coordinator;
  const key = keyOf(teamId, state);
  let view;
  if (state.kind === "history") {
    const r = await threads.history(key, userId, state.page, state.status === true);
    view = r.ok
      ? renderHistoryView(state, r.items, r.paging)
      : renderViewError(TITLE.history, r.error);
  } else {
    const r = await threads.files(key, userId, state.page);
    view = r.ok ? renderFilesView(state, r.items, r.paging) : renderViewError(TITLE.files, r.error);
  }
  await client.views.update({ view_id: viewId, view: view as never });
}

/** Opens History or Files of a task thread: "Loading…" at once, then the service's answer. */
export async function openTaskView(
  client: Client,
  deps: ListenerDeps,
  trigger: string,
  kind: ViewState["kind"],
  key: SlackThreadKey,
  userId: string,
): Promise<void> {
  try {
    const view = renderLoadingView(TITLE[kind]);
    const opened = await client.views.open({ trigger_id: trigger, view: view as never });
    const viewId = opened.view?.id;
    const state = { channelId: key.channelId, threadTs: key.threadTs, kind, page: 1 };
    if (viewId) await fill(deps, client, viewId, state, key.teamId, userId);
  } catch (err) {
    deps.logger.warn({ err, kind }, "could not show a task view");
  }
}

/** The buttons under an answer, and those inside History and Files (paging, "Get it"). */
export function register(app: App, deps: ListenerDeps): void {
  registerContinue(app, deps);
  for (const kind of ["history", "files", "continue"] as const) {
    app.action(TASK_ACTION[kind], async ({ ack, body, client, respond, context }) => {
      await ack();
      const parsed = ActionBody.safeParse(body);
      const ref = parsed.success ? messageTarget(parsed.data) : undefined;
      if (!parsed.success || !ref) {
        await tellThrough(respond)("That button does not belong to this conversation.");
        return;
      }
      const { trigger_id: trigger, user } = parsed.data;
      if (kind !== "continue") {
        const key = { teamId: authorisedTeam(context), ...ref };
        await openTaskView(client, deps, trigger, kind, key, user.id);
        return;
      }
      await openView(client, deps, trigger, renderContinueView(ref), "the Continue form");
    });
  }

  for (const id of [new RegExp(`^${TASK_ACTION.page}_`), TASK_ACTION.statusMessages]) {
    app.action(id, async ({ ack, body, client, context }) => {
      await ack();
      const parsed = ActionBody.safeParse(body);
      const state = parsed.success ? viewTarget(parsed.data) : undefined;
      if (!parsed.success || !state || !parsed.data.view) return;
      const { id: user } = parsed.data.user;
      await fill(deps, client, parsed.data.view.id, state, authorisedTeam(context), user).catch(
        (err: unknown) => deps.logger.warn({ err }, "could not turn a task view's page"),
      );
    });
  }

  app.action(TASK_ACTION.getFile, async ({ ack, body, client, context }) => {
    await ack();
    const parsed = ActionBody.safeParse(body);
    if (!parsed.success) return;
    const shown = decodeViewState(parsed.data.view?.private_metadata);
    const wanted = FileButton.safeParse(safeJson(parsed.data.actions[0]?.value)).data;
    if (!shown || wanted?.c !== shown.channelId || wanted.t !== shown.threadTs) return;
    const key = keyOf(authorisedTeam(context), shown);
    const text = await deps.coordinator.threads.fetchFile(key, parsed.data.user.id, wanted.f);
    await client.chat
      .postEphemeral({
        channel: key.channelId,
        thread_ts: key.threadTs,
        user: parsed.data.user.id,
        text,
      })
      .catch((err: unknown) => deps.logger.warn({ err }, "could not say where the file went"));
  });
}

function registerContinue(app: App, deps: ListenerDeps): void {
  app.view(CONTINUE_VIEW, async ({ ack, body, client, context }) => {
    const parsed = Submission.safeParse(body);
    const ref = parsed.success ? decodeTaskRef(parsed.data.view.private_metadata) : undefined;
    if (!parsed.success || !ref) {
      await ack(formErrors({ prompt: "That form looked malformed; please try again." }));
      return;
    }
    const values = parsed.data.view.state.values;
    const text = values.prompt?.value?.value ?? "";
    const files = fileRefs(values.files?.value?.files ?? []);
    if (text.trim() === "" && files.length === 0) {
      await ack(formErrors({ prompt: "Write what comes next, or attach a file." }));
      return;
    }
    await ack();
    const key = keyOf(authorisedTeam(context), ref);
    const user = parsed.data.user.id;
    const refusal = await deps.coordinator.threads
      .continueTask(key, user, text, files)
      .catch((err: unknown) => {
        deps.logger.warn({ err }, "could not continue from the form");
        return "Your message could not be sent to the task. Please reply in the thread instead.";
      });
    if (refusal !== undefined) {
      await client.chat
        .postEphemeral({ channel: key.channelId, thread_ts: key.threadTs, user, text: refusal })
        .catch(() => undefined);
    }
  });
}

const FileButton = z.object({ c: z.string(), t: z.string(), f: z.string().min(1) });

function safeJson(value: string | undefined): unknown {
  try {
    return JSON.parse(value ?? "");
  } catch {
    return undefined;
  }
}
