// What Slack sends an app from its App Home tab: the `app_home_opened` event, and a click on a
// button of a view (Home tab or modal: `block_actions` with a `view` container and a trigger id).
import { randomBytes } from "node:crypto";
import {
  FORM_CONTENT_TYPE,
  type SignOptions,
  type SlackHttpResponse,
  sendEvent,
  sendSignedRequest,
} from "./slack-requests.ts";

let seq = 0;

/** `app_home_opened` for `tab` ("home" or "messages"), with the Home view shown, if any. */
export function sendAppHomeOpened(
  url: string,
  signingSecret: string,
  input: {
    team_id: string;
    user_id: string;
    tab?: "home" | "messages";
    view?: Record<string, unknown>;
  },
): Promise<SlackHttpResponse> {
  const now = Date.now() / 1000;
  return sendEvent(url, signingSecret, {
    event_id: `EvH${++seq}x${Date.now()}`,
    team_id: input.team_id,
    event: {
      type: "app_home_opened",
      user: input.user_id,
      channel: `D${input.user_id.slice(1)}`,
      tab: input.tab ?? "home",
      event_ts: now.toFixed(6),
      ...(input.view ? { view: input.view } : {}),
    },
  });
}

export interface ViewActionInput {
  team_id: string;
  user_id: string;
  /** The view the button is in, as Slack answered views.publish / views.open. */
  view: Record<string, unknown>;
  action_id: string;
  block_id?: string;
  value?: string;
}

/** A button clicked in a view: `block_actions` with a `view` container, as Slack posts it. */
export function viewActionPayload(input: ViewActionInput): Record<string, unknown> {
  const trigger = `${Date.now()}.${++seq}.${randomBytes(16).toString("hex")}`;
  return {
    type: "block_actions",
    user: {
      id: input.user_id,
      username: input.user_id.toLowerCase(),
      name: input.user_id.toLowerCase(),
      team_id: input.team_id,
    },
    api_app_id: "A0001",
    token: "legacy-verification-token",
    container: { type: "view", view_id: String(input.view.id ?? "") },
    trigger_id: trigger,
    team: { id: input.team_id, domain: "local-slack" },
    enterprise: null,
    is_enterprise_install: false,
    view: input.view,
    actions: [
      {
        action_id: input.action_id,
        block_id: input.block_id ?? "actions",
        text: { type: "plain_text", text: "Button", emoji: true },
        ...(input.value === undefined ? {} : { value: input.value }),
        type: "button",
        action_ts: (Date.now() / 1000).toFixed(6),
      },
    ],
  };
}

export function sendViewAction(
  url: string,
  signingSecret: string,
  input: ViewActionInput,
  options: SignOptions = {},
): Promise<SlackHttpResponse> {
  const body = new URLSearchParams({
    payload: JSON.stringify(viewActionPayload(input)),
  }).toString();
  return sendSignedRequest(url, signingSecret, body, FORM_CONTENT_TYPE, options);
}
