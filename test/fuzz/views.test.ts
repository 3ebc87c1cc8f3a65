/**
 * Fuzzing the views of a task (the New task modal, History, Files, Continue, loading and error
 * views) and the values its buttons carry: whatever the service, the people and the
 * configuration hand them, Slack's views.open / views.update would accept them (oracle:
 * tools/local-slack's validateView), no text pings, and a button's value reads back as what
 * was encoded.
 */
import fc from "fast-check";
import { describe, expect } from "vitest";
import type { HistoryMessage, ThreadFile } from "../../src/service/schemas.ts";
import { decodeStopValue, encodeStopValue } from "../../src/view/render.ts";
import { MODAL_PROMPT_MAX, quotePrompt, renderNewTaskModal } from "../../src/view/modal.ts";
import {
  decodeTaskRef,
  decodeViewState,
  encodeTaskRef,
  encodeViewState,
  renderContinueView,
  renderFilesView,
  renderHistoryView,
  renderLoadingView,
  renderViewError,
  type ViewState,
} from "../../src/view/task-views.ts";
import { channelId, inline, markdown, ts } from "./arbitraries.ts";
import { fuzz } from "./fuzz.ts";
import { allWellFormed, configNames, expectGoodView } from "./view-oracle.ts";

/** What a hostile or broken service may say: any text, roles that are JS property names. */
const serviceText = fc.oneof(inline, markdown, fc.string({ maxLength: 5_000 }));
const role = fc.oneof(
  fc.constantFrom("user", "assistant", "system", "tool"),
  fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"),
  inline,
);
const historyMessage: fc.Arbitrary<HistoryMessage> = fc.record({
  message_id: fc.option(fc.uuid(), { nil: null }),
  role,
  content: serviceText,
  created_at: fc.option(
    fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      inline,
    ),
    {
      nil: null,
    },
  ),
  has_code: fc.option(fc.boolean(), { nil: undefined }),
  has_files: fc.option(fc.boolean(), { nil: undefined }),
});
const threadFile: fc.Arbitrary<ThreadFile> = fc.record({
  file_id: fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 400 })),
  file_name: fc.oneof(inline, fc.string({ minLength: 1, maxLength: 400 })).filter((s) => s !== ""),
  file_size: fc.option(fc.nat({ max: 2 ** 45 }), { nil: null }),
  file_type: fc.option(inline, { nil: null }),
});
const viewState: fc.Arbitrary<ViewState> = fc.record({
  kind: fc.constantFrom("history" as const, "files" as const),
  channelId,
  threadTs: ts,
  page: fc.integer({ min: 1, max: 1_000_000 }),
  status: fc.boolean(),
});
const paging = fc.record({
  page: fc.integer({ min: 1, max: 1_000_000 }),
  hasNext: fc.boolean(),
  totalPages: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }),
});

describe("fuzz: views", () => {
  fuzz("New task modal: accepted for any configured names, channel and quoted message", () =>
    fc.property(
      configNames,
      configNames,
      fc.option(channelId, { nil: undefined }),
      fc.option(fc.oneof(markdown, fc.string({ maxLength: 8_000 })), { nil: undefined }),
      (models, agents, channel, message) => {
        const prompt = message === undefined ? undefined : quotePrompt(message);
        if (prompt !== undefined) expect(prompt.length).toBeLessThanOrEqual(MODAL_PROMPT_MAX);
        const view = renderNewTaskModal({
          channelId: channel,
          prompt,
          choices: { models, agents },
        });
        expectGoodView(view, allWellFormed([models, agents, message ?? ""]));
      },
    ),
  );

  fuzz("History and Files views: accepted whatever the service answers", () =>
    fc.property(
      viewState,
      fc.array(historyMessage, { maxLength: 12 }),
      fc.array(threadFile, { maxLength: 25 }),
      paging,
      (state, messages, files, page) => {
        const wellFormed = allWellFormed([messages, files]);
        expectGoodView(renderHistoryView(state, messages, page), wellFormed);
        expectGoodView(renderFilesView(state, files, page), wellFormed);
      },
    ),
  );

  fuzz("Continue, Loading and error views: accepted for any thread and any error text", () =>
    fc.property(channelId, ts, serviceText, (c, t, error) => {
      expectGoodView(renderContinueView({ channelId: c, threadTs: t }), true);
      expectGoodView(renderLoadingView("Task history"), true);
      expectGoodView(renderViewError("Task files", error), error.isWellFormed());
    }),
  );

  fuzz("button values: any text decodes without throwing; encoded values read back", () =>
    fc.property(
      fc.oneof(
        fc.string(),
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
      viewState,
      fc.uuid(),
      (junk, state, runId) => {
        decodeStopValue(junk);
        decodeTaskRef(junk);
        decodeViewState(junk);
        const ref = { channelId: state.channelId, threadTs: state.threadTs };
        expect(decodeTaskRef(encodeTaskRef(ref))).toEqual(ref);
        expect(decodeViewState(encodeViewState(state))).toEqual(state);
        expect(decodeStopValue(encodeStopValue({ ...ref, runId }))).toEqual({ ...ref, runId });
      },
    ),
  );
});
