/**
 * The local Slack runs the app's Workflow Builder steps as Slack does: an execution with a token
 * of its own and the `function_executed` event describing the step, sent like other events;
 * it takes one end of each execution, with that token only, and outputs that fit the step.
 */
import { describe, expect, it } from "vitest";
import { type FunctionDefinition, startLocalSlack } from "../../../tools/local-slack/index.ts";
import { LocalSocketMode } from "../../../tools/local-slack/local-socket-mode.ts";

const STEP: FunctionDefinition = {
  title: "Run a task",
  input_parameters: { prompt: { type: "string", is_required: true } },
  output_parameters: {
    status: { type: "string", is_required: true },
    answer: { type: "string" },
  },
};

async function call(url: string, method: string, token: string, body: Record<string, unknown>) {
  const res = await fetch(`${url}${method}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { ok: boolean; error?: string };
}

describe("Workflow Builder steps in the local Slack", () => {
  it("sends function_executed over Socket Mode and ends an execution once, with its own token, outputs that fit", async () => {
    const slack = await startLocalSlack({ teamId: "T0001", functions: { run_task: STEP } });
    const socket = await LocalSocketMode.start();
    try {
      const received: unknown[] = [];
      const app = new WebSocket(socket.url);
      app.onmessage = (m) => {
        const envelope = JSON.parse(String(m.data)) as { envelope_id?: string; payload?: unknown };
        if (!envelope.envelope_id) return;
        received.push(envelope.payload);
        app.send(JSON.stringify({ envelope_id: envelope.envelope_id }));
      };
      await socket.connected();
      const { id, token } = await slack.executeFunction(
        { callbackId: "run_task", inputs: { prompt: "Hi" } },
        { socket },
      );
      expect(received).toMatchObject([
        {
          type: "event_callback",
          event: {
            type: "function_executed",
            function: { callback_id: "run_task", title: "Run a task" },
            inputs: { prompt: "Hi" },
            function_execution_id: id,
            bot_access_token: token,
          },
        },
      ]);
      app.close();
      const api = slack.apiUrl;
      const done = { function_execution_id: id, outputs: { status: "completed" } };
      expect(await call(api, "functions.completeSuccess", slack.botToken, done)).toMatchObject({
        ok: false,
        error: "not_allowed_token_type",
      });
      const tooLong = { ...done, outputs: { status: "completed", answer: "é".repeat(2001) } };
      const missing = { ...done, outputs: { answer: "x" } };
      for (const bad of [tooLong, missing]) {
        expect(await call(api, "functions.completeSuccess", token, bad)).toMatchObject({
          ok: false,
          error: "parameter_validation_failed",
        });
      }
      expect(await call(api, "functions.completeSuccess", token, done)).toEqual({ ok: true });
      expect(
        await call(api, "functions.completeError", token, {
          function_execution_id: id,
          error: "x",
        }),
      ).toMatchObject({ ok: false, error: "execution_not_in_running_state" });
      expect(
        await call(api, "functions.completeError", token, {
          function_execution_id: "Fx0",
          error: "x",
        }),
      ).toMatchObject({ ok: false, error: "function_execution_not_found" });
      expect(slack.execution(id)).toMatchObject({ status: "completed", outputs: done.outputs });
    } finally {
      await socket.close();
      await slack.close();
    }
  });

  it("opens a person's DM with the app (conversations.open, im:write)", async () => {
    const slack = await startLocalSlack({
      teamId: "T0001",
      scopes: ["chat:write"],
      users: [{ id: "U0ANN", name: "ann" }],
    });
    try {
      const open = { users: "U0ANN" };
      expect(await call(slack.apiUrl, "conversations.open", slack.botToken, open)).toMatchObject({
        ok: false,
        error: "missing_scope",
      });
      slack.scopes?.add("im:write");
      expect(await call(slack.apiUrl, "conversations.open", slack.botToken, open)).toMatchObject({
        ok: true,
        channel: { id: "D0ANN" },
      });
    } finally {
      await slack.close();
    }
  });
});
