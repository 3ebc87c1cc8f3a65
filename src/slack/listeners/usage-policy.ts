/**
 * The workspace's usage policy from App Home: its admins and owners get a Usage policy button
 * opening the form (who, where, quota); saving checks again who submits and what they chose.
 */
import type { AllMiddlewareArgs, App } from "@slack/bolt";
import { z } from "zod";
import { DEFAULT_USAGE_POLICY, getUsagePolicy, putUsagePolicy } from "../../store/usage-policy.ts";
import {
  HOME_USAGE_POLICY,
  readUsagePolicy,
  renderUsagePolicyModal,
  USAGE_FIELD,
  USAGE_POLICY_VIEW,
  type UserGroupOption,
} from "../../view/usage-policy.ts";
import { isWorkspaceAdmin } from "../admin-home.ts";
import { listUserGroups } from "../user-groups.ts";
import type { ListenerDeps } from "./surface.ts";

const ONLY_ADMINS = "Only a workspace admin or owner can change the usage policy.";

const Who = z.object({
  user: z.object({ id: z.string().min(1), team_id: z.string().optional() }),
  team: z.object({ id: z.string().min(1) }).nullish(),
});
const teamOf = (who: z.infer<typeof Who>) => who.team?.id ?? who.user.team_id ?? "";

const Opened = Who.extend({ trigger_id: z.string().min(1) });

const Submitted = Who.extend({
  view: z.object({
    state: z.object({
      values: z.record(
        z.string(),
        z.record(
          z.string(),
          z.object({
            value: z.string().nullish(),
            selected_option: z.object({ value: z.string() }).nullish(),
            selected_options: z.array(z.object({ value: z.string() })).nullish(),
            selected_conversations: z.array(z.string()).nullish(),
          }),
        ),
      ),
    }),
  }),
});

type Client = AllMiddlewareArgs["client"];

/** Whether the person administers the workspace; false when Slack cannot say (logged). */
function mayChange(client: Client, deps: ListenerDeps, userId: string): Promise<boolean> {
  return isWorkspaceAdmin(client, userId).catch((err: unknown) => {
    deps.logger.warn({ err }, "could not tell whether a person administers the workspace");
    return false;
  });
}

/** A modal with one sentence (why the form is not shown). */
const notice = (text: string) => ({
  type: "modal",
  title: { type: "plain_text", text: "Usage policy" },
  close: { type: "plain_text", text: "Close" },
  blocks: [{ type: "section", text: { type: "mrkdwn", text } }],
});

/** The form with the workspace's current policy and its user groups. */
async function openForm(client: Client, deps: ListenerDeps, teamId: string, trigger: string) {
  let view: Record<string, unknown>;
  try {
    const policy = await getUsagePolicy(deps.records, teamId).catch((err: unknown) => {
      // An unreadable policy refuses every task: the admin saves a fresh one from here.
      deps.logger.error({ err }, "could not read the usage policy; the form shows the default");
      return DEFAULT_USAGE_POLICY;
    });
    const groups: UserGroupOption[] = await listUserGroups(client).catch((err: unknown) => {
      deps.logger.warn({ err }, "could not list the workspace's user groups");
      return [];
    });
    view = renderUsagePolicyModal(policy, groups);
  } catch (err) {
    deps.logger.warn({ err }, "could not prepare the usage policy form");
    view = notice("The usage policy is unavailable right now; please try again in a minute.");
  }
  await client.views.open({ trigger_id: trigger, view: view as never });
}

export function register(app: App, deps: ListenerDeps): void {
  app.action(HOME_USAGE_POLICY, async ({ ack, body, client }) => {
    await ack();
    const parsed = Opened.safeParse(body);
    if (!parsed.success) return;
    const { user, trigger_id: trigger } = parsed.data;
    try {
      if (await mayChange(client, deps, user.id)) {
        await openForm(client, deps, teamOf(parsed.data), trigger);
      } else {
        await client.views.open({ trigger_id: trigger, view: notice(ONLY_ADMINS) as never });
      }
    } catch (err) {
      deps.logger.warn({ err }, "could not open the usage policy form");
    }
  });

  app.view(USAGE_POLICY_VIEW, async ({ ack, body, client }) => {
    const parsed = Submitted.safeParse(body);
    if (!parsed.success) {
      const errors = { [USAGE_FIELD.quota]: "That form looked malformed." };
      await ack({ response_action: "errors", errors });
      return;
    }
    const read = readUsagePolicy(parsed.data.view.state.values);
    if ("errors" in read) {
      await ack({ response_action: "errors", errors: read.errors });
      return;
    }
    const teamId = teamOf(parsed.data);
    const userId = parsed.data.user.id;
    // The button was shown to an admin; whoever submits must still be one.
    const problem = !(await mayChange(client, deps, userId))
      ? ONLY_ADMINS
      : await putUsagePolicy(deps.records, teamId, read.policy).then(
          () => undefined,
          (err: unknown) => {
            deps.logger.warn({ err }, "could not save the usage policy");
            return "The usage policy could not be saved right now; please try again.";
          },
        );
    if (problem !== undefined) {
      await ack({ response_action: "errors", errors: { [USAGE_FIELD.quota]: problem } });
      return;
    }
    await ack();
    deps.logger.info({ team: teamId, user: userId }, "usage policy changed");
    await deps.home.publish(teamId, userId);
  });
}
