/**
 * The pieces of the OAuth install flow the app adds to Bolt's: a `state` that works once (on
 * any instance), and one log line per workspace where the app is not installed, or whose stored
 * installation cannot be used.
 */
import { Writable } from "node:stream";
import { InvalidStateError } from "@slack/oauth";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log.ts";
import {
  singleUseStateStore,
  uninstalledWorkspaces,
} from "../../../src/slack/oauth/install-flow.ts";
import {
  InstallationNotFoundError,
  InstallationUnreadableError,
} from "../../../src/store/installations.ts";
import { createMemoryStore } from "../../support/fakes/memory-store.ts";

const SECRET = "state-secret-of-my-own-0123";
const options = { scopes: ["chat:write", "commands"] };

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: "info", destination }) };
}

describe("the OAuth state", () => {
  it("is redeemed once, whichever instance gets it back", async () => {
    const shared = createMemoryStore();
    const one = singleUseStateStore(SECRET, shared);
    const other = singleUseStateStore(SECRET, shared);
    const state = await one.generateStateParam(options, new Date());
    expect(await other.verifyStateParam(new Date(), state)).toEqual(options);
    await expect(one.verifyStateParam(new Date(), state)).rejects.toBeInstanceOf(InvalidStateError);
  });

  it("refuses a state it did not sign, one altered, and one older than ten minutes", async () => {
    const store = singleUseStateStore(SECRET, createMemoryStore());
    const foreign = await singleUseStateStore(
      "another-secret-entirely-0123",
      createMemoryStore(),
    ).generateStateParam(options, new Date());
    await expect(store.verifyStateParam(new Date(), foreign)).rejects.toBeInstanceOf(
      InvalidStateError,
    );
    const state = await store.generateStateParam(options, new Date());
    // One character changed for another (never for itself: that made this case fail whenever
    // the state's last-but-one character happened to be the replacement).
    const at = state.length - 2;
    const altered = `${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`;
    expect(altered).not.toBe(state);
    await expect(store.verifyStateParam(new Date(), altered)).rejects.toBeInstanceOf(
      InvalidStateError,
    );
    const later = new Date(Date.now() + 601_000);
    await expect(store.verifyStateParam(later, state)).rejects.toBeInstanceOf(InvalidStateError);
    // Refusals spend nothing: the genuine state still works once.
    expect(await store.verifyStateParam(new Date(), state)).toEqual(options);
  });
});

/** The store's error as Bolt hands it over: @slack/oauth's AuthorizationError, then Bolt's, each
 * keeping the previous as `original`. */
const wrap = (fromStore: Error) =>
  Object.assign(new Error("Authorization of incoming event did not succeed."), {
    code: "slack_bolt_authorization_error",
    original: Object.assign(new Error(fromStore.message), { original: fromStore }),
  });

describe("events from a workspace where the app is not installed", () => {
  const key = { teamId: "T0NOTHERE", enterpriseId: undefined, isEnterpriseInstall: false };
  const missing = (teamId: string) => wrap(new InstallationNotFoundError({ ...key, teamId }));

  it("are recognised through Bolt's wrapping of the store's error", () => {
    const { lines, logger } = capture();
    const uninstalled = uninstalledWorkspaces(logger);
    expect(uninstalled.handled(missing("T0NOTHERE"))).toBe(true);
    expect(uninstalled.handled(new Error("Redis is not reachable"))).toBe(false);
    expect(lines.map((l) => l.team)).toEqual(["T0NOTHERE"]);
  });

  it("are logged once per workspace, and again only an hour later", () => {
    const { lines, logger } = capture();
    let now = 1_000_000;
    const uninstalled = uninstalledWorkspaces(logger, () => now);
    uninstalled.handled(missing("T0NOTHERE"));
    now += 59 * 60_000;
    expect(uninstalled.handled(missing("T0NOTHERE"))).toBe(true);
    uninstalled.handled(missing("T0ALSONOT"));
    expect(lines.map((l) => l.team)).toEqual(["T0NOTHERE", "T0ALSONOT"]);
    expect(lines[0]?.msg).toBe(
      "ignored an event from a workspace where the app is not installed (install it from /slack/install)",
    );
    now += 2 * 60_000;
    uninstalled.handled(missing("T0NOTHERE"));
    expect(lines.map((l) => l.team)).toEqual(["T0NOTHERE", "T0ALSONOT", "T0NOTHERE"]);
  });
});

describe("events from a workspace whose stored installation cannot be used", () => {
  const key = { teamId: "T0PLAIN", enterpriseId: undefined, isEnterpriseInstall: false };
  const why =
    "a token in it does not open (not sealed in this app's format); install the app there again";

  it("are recognised through Bolt's wrapping, and logged as errors once per workspace an hour", () => {
    const unreadable = wrap(new InstallationUnreadableError(key, why));
    const { lines, logger } = capture();
    let now = 1_000_000;
    const reports = uninstalledWorkspaces(logger, () => now);
    expect(reports.handled(unreadable)).toBe(true);
    reports.handled(wrap(new InstallationNotFoundError(key))); // not installed is another report
    now += 30 * 60_000;
    reports.handled(unreadable);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, `ignored an event: the stored installation of workspace T0PLAIN is unreadable: ${why}`],
      [
        40,
        "ignored an event from a workspace where the app is not installed (install it from /slack/install)",
      ],
    ]);
  });
});
