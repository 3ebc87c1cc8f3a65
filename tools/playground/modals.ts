// The playground's modals: the views the app opens (views.open / views.update on the local
// Slack), shown on the page, and what the person does in them sent back as Slack does it:
// signed view_submission and block_actions requests.
import { extname } from "node:path";
import { z } from "zod";
import type { LocalSlack } from "../local-slack/index.ts";
import { sendViewAction, sendViewSubmission } from "../local-slack/slack-requests.ts";

const FileBody = z.object({ name: z.string().min(1), mimetype: z.string(), base64: z.string() });

/** A submitted form: Slack's `state.values`, files given as their bytes (made Slack files here). */
export const SubmitBody = z.object({
  viewId: z.string().min(1),
  values: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown()))),
  files: z
    .array(z.object({ block: z.string(), action: z.string(), files: z.array(FileBody).max(10) }))
    .default([]),
});
export const ViewActionBody = z.object({
  viewId: z.string().min(1),
  actionId: z.string().min(1),
  value: z.string(),
  blockId: z.string().optional(),
});
export const CloseBody = z.object({ viewId: z.string().min(1) });

export class PlaygroundModals {
  readonly #slack: LocalSlack;
  readonly #eventsUrl: string;
  readonly #secret: string;
  readonly #team: string;
  readonly #user: string;
  /** Views the person closed or submitted successfully. */
  readonly #closed = new Set<string>();
  /** What the app said to fix, by view id (`response_action: errors`). */
  readonly #errors = new Map<string, Record<string, string>>();

  constructor(slack: LocalSlack, eventsUrl: string, secret: string, team: string, user: string) {
    this.#slack = slack;
    this.#eventsUrl = eventsUrl;
    this.#secret = secret;
    this.#team = team;
    this.#user = user;
  }

  /** The modal on screen: the last view opened and not closed, with its errors. */
  current():
    { id: string; view: Record<string, unknown>; errors: Record<string, string> } | undefined {
    const open = this.#slack
      .views()
      .filter((v) => !this.#closed.has(v.id) && v.view.type === "modal");
    const last = open.at(-1);
    return last
      ? { id: last.id, view: last.view, errors: this.#errors.get(last.id) ?? {} }
      : undefined;
  }

  close(body: z.infer<typeof CloseBody>): { status: number } {
    this.#closed.add(body.viewId);
    return { status: 200 };
  }

  async submit(body: z.infer<typeof SubmitBody>): Promise<{ status: number }> {
    const view = this.#slack.views().find((v) => v.id === body.viewId);
    if (!view) return { status: 404 };
    const values = structuredClone(body.values);
    for (const input of body.files) {
      const files = input.files.map((f) => ({
        ...this.#slack.addUserFile({
          name: f.name,
          mimetype: f.mimetype || "application/octet-stream",
          bytes: Buffer.from(f.base64, "base64"),
        }),
        filetype: extname(f.name).slice(1),
      }));
      values[input.block] = { [input.action]: { type: "file_input", files } };
    }
    const res = await sendViewSubmission(this.#eventsUrl, this.#secret, {
      team_id: this.#team,
      user_id: this.#user,
      view: view.view,
      values,
    });
    const answer = z
      .object({ response_action: z.literal("errors"), errors: z.record(z.string(), z.string()) })
      .safeParse(res.json);
    if (answer.success) this.#errors.set(body.viewId, answer.data.errors);
    else if (res.status === 200) this.#closed.add(body.viewId);
    return { status: res.status };
  }

  async action(body: z.infer<typeof ViewActionBody>): Promise<{ status: number }> {
    const view = this.#slack.views().find((v) => v.id === body.viewId);
    if (!view) return { status: 404 };
    const res = await sendViewAction(this.#eventsUrl, this.#secret, {
      team_id: this.#team,
      user_id: this.#user,
      view: view.view,
      action_id: body.actionId,
      value: body.value,
      ...(body.blockId ? { block_id: body.blockId } : {}),
    });
    return { status: res.status };
  }
}
