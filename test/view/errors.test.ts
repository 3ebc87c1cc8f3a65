/**
 * What a person in Slack is told when the task service or Slack says no: one specific,
 * actionable sentence per failure, never a secret and never a stack trace.
 */
import { describe, expect, it } from "vitest";
import {
  type ServiceErrorInit,
  type ServiceErrorKind,
  TaskServiceError,
} from "../../src/service/errors.ts";
import {
  describeServiceError,
  describeSlackPostError,
  slackErrorCode,
} from "../../src/view/errors.ts";

const SECRET = "sk-live-7f3a9c1e2b4d";
const err = (kind: ServiceErrorKind, over: Partial<ServiceErrorInit> = {}) =>
  new TaskServiceError({ kind, message: `HTTP failure, key ${SECRET}`, ...over });

describe("describeServiceError: a specific sentence per failure", () => {
  it.each<[ServiceErrorKind, RegExp[]]>([
    ["auth", [/API key/, /workspace admin/, /TASK_API_KEY/]],
    ["credits", [/out of credits/, /add credits/, /try again/]],
    ["rate_limited", [/too many requests/, /try again in a minute/]],
    ["validation", [/refused the request/, /adjust it and try again/]],
    ["bad_request", [/refused the request/, /adjust it and try again/]],
    ["not_found", [/no longer knows this conversation/, /start a new task with `\/task`/]],
    ["forbidden", [/another account/, /start a new task with `\/task`/]],
    ["server", [/failed \(HTTP 5xx\)/, /try again in a moment/]],
    ["network", [/could not be reached/, /try again in a moment/]],
    ["timeout", [/could not be reached/, /try again in a moment/]],
    ["protocol", [/does not understand/, /tell the person who runs this app/]],
  ])("%s: says what happened and what to do", (kind, expected) => {
    const text = describeServiceError(err(kind));
    for (const re of expected) expect(text).toMatch(re);
    expect(text).toMatch(/\.$/);
  });

  it("tells different failures apart", () => {
    const kinds: ServiceErrorKind[] = [
      "auth",
      "credits",
      "rate_limited",
      "validation",
      "not_found",
      "forbidden",
      "server",
      "network",
      "protocol",
      "input",
    ];
    const texts = new Set(kinds.map((k) => describeServiceError(err(k, { message: "Too long." }))));
    expect(texts.size).toBe(kinds.length);
  });

  it.each([
    [7_000, "try again in 7 seconds."],
    [6_001, "try again in 7 seconds."],
    [1_000, "try again in 1 second."],
    [0, "try again in 1 second."],
    [89_000, "try again in 89 seconds."],
    [90_000, "try again in 2 minutes."],
    [300_000, "try again in 5 minutes."],
    [undefined, "try again in a minute."],
  ])("rate limited with retryAfterMs %j: %s", (retryAfterMs, ending) => {
    const text = describeServiceError(
      err("rate_limited", retryAfterMs === undefined ? {} : { retryAfterMs }),
    );
    expect(text.endsWith(`Please ${ending}`)).toBe(true);
  });

  it("repeats the limit the client refused, for input errors", () => {
    const text = describeServiceError(
      err("input", {
        message: "Your prompt is 6,000 characters; at most 5,000.",
        limit: "prompt_length",
      }),
    );
    expect(text).toBe(
      "Your prompt is 6,000 characters; at most 5,000. Please shorten or adjust your request and try again.",
    );
  });

  it("passes on what the service said was wrong with the request", () => {
    expect(describeServiceError(err("validation", { detail: "prompt: field required" }))).toBe(
      "The task service refused the request (prompt: field required). Please adjust it and try again.",
    );
    // The service's words are escaped like answers: no link, mention or markup of theirs.
    const hostile = describeServiceError(
      err("bad_request", { detail: "<!channel> see <https://evil.example|your bank> & @here" }),
    );
    expect(hostile).toBe(
      "The task service refused the request (&lt;!channel&gt; see &lt;https://evil.example|your bank&gt; &amp; @\u200Bhere). Please adjust it and try again.",
    );
    expect(
      describeServiceError(err("validation", { detail: "x".repeat(10_000) })).length,
    ).toBeLessThan(600);
    expect(describeServiceError(err("bad_request"))).toBe(
      "The task service refused the request. Please adjust it and try again.",
    );
  });

  it("names the HTTP status and the run, so a report can be traced", () => {
    expect(describeServiceError(err("server", { status: 503 }), "run_42")).toBe(
      "The task service failed (HTTP 503) while running `run_42`. Please try again in a moment.",
    );
    expect(describeServiceError(err("network"), "run_42")).toContain("while following `run_42`");
    expect(describeServiceError(err("timeout"), "run_42")).toContain("while following `run_42`");
    expect(describeServiceError(err("protocol"), "run_42")).toContain("(run `run_42`)");
    expect(describeServiceError(new Error("boom"), "run_42")).toContain("(run `run_42`)");
  });

  it.each<ServiceErrorKind>([
    "auth",
    "credits",
    "rate_limited",
    "not_found",
    "forbidden",
    "server",
    "network",
    "timeout",
    "protocol",
  ])("%s: never repeats the raw error, its detail or its cause", (kind) => {
    const text = describeServiceError(
      err(kind, {
        detail: `Invalid bearer ${SECRET}`,
        status: 500,
        cause: new Error(`connect ECONNREFUSED ${SECRET}`),
      }),
    );
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(/Error:|ECONNREFUSED|at .*\.ts/);
  });

  it("says something generic, without the raw message, for an unexpected error", () => {
    for (const thrown of [new Error(`token ${SECRET}`), `token ${SECRET}`, undefined, null, 42]) {
      const text = describeServiceError(thrown);
      expect(text).toBe(
        "Something went wrong on our side. Please try again; if it keeps happening, tell the person who runs this app.",
      );
    }
  });
});

describe("describeSlackPostError: when the bot cannot post where it was asked", () => {
  it("asks to invite the bot to a channel it is not in", () => {
    expect(describeSlackPostError("not_in_channel", "C0123")).toMatch(/\/invite @Task Agent/);
  });

  it("tells a private channel from a direct message", () => {
    expect(describeSlackPostError("channel_not_found", "C0123")).toMatch(
      /probably private.*\/invite @Task Agent/,
    );
    expect(describeSlackPostError("channel_not_found", "G0123")).toMatch(/probably private/);
    expect(describeSlackPostError("channel_not_found", "D0123")).toMatch(
      /direct message with me.*`\/task` there/,
    );
  });

  it("explains archived and restricted channels", () => {
    expect(describeSlackPostError("is_archived", "C0123")).toMatch(/archived/);
    expect(describeSlackPostError("restricted_action", "C0123")).toMatch(/ask an admin/);
    expect(describeSlackPostError("ekm_access_denied", "C0123")).toMatch(/ask an admin/);
  });

  it.each(["ratelimited", "msg_too_long", "invalid_blocks", "", "internal_error"])(
    "leaves %j to the caller",
    (code) => {
      expect(describeSlackPostError(code, "C0123")).toBeUndefined();
    },
  );
});

describe("slackErrorCode", () => {
  it("reads the platform error code of a WebClient error", () => {
    const webApiError = Object.assign(new Error("An API error occurred: not_in_channel"), {
      code: "slack_webapi_platform_error",
      data: { ok: false, error: "not_in_channel" },
    });
    expect(slackErrorCode(webApiError)).toBe("not_in_channel");
  });

  it.each([
    undefined,
    null,
    42,
    "not_in_channel",
    new Error("x"),
    { data: null },
    { data: { error: 1 } },
  ])("finds no code in %j", (value) => {
    expect(slackErrorCode(value)).toBeUndefined();
  });
});
