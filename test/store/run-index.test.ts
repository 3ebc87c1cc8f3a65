/**
 * The index of unfinished runs on the embedded store and on Redis: entries are stamped with the
 * store's format version and lapse when nobody writes them; an entry of another format is
 * skipped and left as it is.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@redis/client";
import { afterAll, describe, expect, it } from "vitest";
import { testRedisUrl } from "../support/needs.ts";
import type { StoreOptions } from "../../src/store/keyv-store.ts";
import { createRedisStore } from "../../src/store/redis.ts";
import { FORMAT_VERSION } from "../../src/store/record-format.ts";
import { runIndexTtlMs } from "../../src/store/run-index.ts";
import { createSqliteStore, SqliteKeyvAdapter } from "../../src/store/sqlite.ts";
import {
  personStop,
  type RelayedRun,
  type ReservedRun,
  reservationId,
  serviceRunId,
  type ThreadStore,
} from "../../src/store/types.ts";

const dir = mkdtempSync(join(tmpdir(), "taskbot-runindex-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const redisUrl = testRedisUrl();

let n = 0;
const unique = () => `${process.pid}x${Date.now().toString(36)}x${n++}`;

/** One backend: a store on it, and its raw run-index entries (as another release sees them). */
interface Backend {
  open(options: StoreOptions): ThreadStore;
  readRaw(namespace: string, runId: string): Promise<string | undefined>;
  writeRaw(namespace: string, runId: string, value: string): Promise<void>;
  close(): Promise<void>;
}

function sqliteBackend(): Backend {
  const path = join(dir, "index.sqlite");
  const raw = new SqliteKeyvAdapter(path);
  return {
    open: (options) => createSqliteStore(path, () => {}, options),
    readRaw: async (ns, runId) =>
      (await raw.get<string>(`${ns}:run:${runId}`)) as string | undefined,
    writeRaw: async (ns, runId, value) => {
      await raw.set(`${ns}:run:${runId}`, value, 7 * 24 * 3600 * 1000);
    },
    close: () => raw.disconnect(),
  };
}

function redisBackend(url: string): Backend {
  const client = createClient({ url });
  const connecting = client.connect();
  return {
    open: (options) => createRedisStore(url, () => {}, options),
    readRaw: async (ns, runId) => {
      await connecting;
      return (await client.hGet(`${ns}:runs`, `${ns}:run:${runId}`)) ?? undefined;
    },
    writeRaw: async (ns, runId, value) => {
      await connecting;
      await client.hSet(`${ns}:runs`, `${ns}:run:${runId}`, value);
    },
    close: async () => {
      await connecting;
      client.destroy();
    },
  };
}

const backends: Array<[string, () => Backend]> = [["embedded SQLite", sqliteBackend]];
if (redisUrl) backends.push(["Redis", () => redisBackend(redisUrl)]);

const TEAM = "T0RUNIDX";
const HOUR = 3600 * 1000;

function runRecord(runId: string, startedAt: number): RelayedRun {
  return {
    kind: "relaying",
    runId: serviceRunId(runId),
    key: { teamId: TEAM, channelId: "C1", threadTs: "1700000000.000100" },
    ref: { projectId: "p", threadId: "t" },
    messageTs: ["1700000000.000200"],
    shownText: "Half an answer",
    startedAt,
    uploads: "pending",
  };
}

describe.each(backends)("the run index on %s", (_name, makeBackend) => {
  const backend = makeBackend();
  afterAll(() => backend.close());

  /** A store on a clock the test moves; entries live 4 h + a day (TASK_MAX_RUN_S's default). */
  function storeAt(start: number) {
    const clock = { now: start };
    const namespace = `ri${unique()}`;
    const ttl = runIndexTtlMs(4 * HOUR);
    const store = backend.open({ namespace, runTtlMs: ttl, now: () => clock.now });
    return { store, clock, namespace, ttl };
  }

  it("writes each entry with its format version and expiry, and reads the record back as it was", async () => {
    const { store, clock, namespace, ttl } = storeAt(Date.UTC(2025, 0, 1));
    const run = runRecord(`run_${unique()}`, clock.now);
    await store.putRun(run);
    const raw = JSON.parse((await backend.readRaw(namespace, run.runId)) ?? "{}") as object;
    expect(raw).toEqual({ v: FORMAT_VERSION, value: { record: run, expiresAt: clock.now + ttl } });
    expect(await store.getRun(run.runId)).toEqual(run);
    expect(await store.listRuns()).toEqual([run]);
    await store.close();
  });

  it("stops listing a run nobody wrote for the maximum run time and a day; each write renews it", async () => {
    const start = Date.UTC(2025, 0, 1);
    const { store, clock, namespace, ttl } = storeAt(start);
    const run = runRecord(`run_${unique()}`, start);
    await store.putRun(run);
    clock.now = start + ttl - 1;
    expect((await store.listRuns()).map((r) => r.runId)).toEqual([run.runId]);
    // The run shows more text: its entry lives on from now.
    await store.putRun({ ...run, shownText: "More of the answer" });
    clock.now = start + ttl + HOUR;
    expect(await store.getRun(run.runId)).toMatchObject({ shownText: "More of the answer" });
    await store.requestStop(run.runId, personStop("U_STOPPER"));
    expect(await store.stopRequest(run.runId)).toEqual(personStop("U_STOPPER"));

    clock.now = start + 2 * ttl;
    expect(await store.listRuns()).toEqual([]);
    // Removed from the store, not just hidden: an instance whose clock is behind finds nothing.
    expect(await backend.readRaw(namespace, run.runId)).toBeUndefined();
    expect(await store.stopRequest(run.runId)).toBeUndefined();
    const behind = backend.open({ namespace, runTtlMs: ttl, now: () => start });
    expect(await behind.getRun(run.runId)).toBeUndefined();
    await behind.close();
    await store.close();
  });

  it("keeps a start whose thread does not exist yet without a thread", async () => {
    const { store, clock, namespace } = storeAt(Date.UTC(2025, 0, 1));
    const start: ReservedRun = {
      kind: "reserved",
      runId: reservationId(`reserved:${TEAM}:C1:${unique()}`),
      key: { teamId: TEAM, channelId: "C1" },
      messageTs: [],
      startedAt: clock.now,
      opening: { userId: "U1", surface: "channel", since: clock.now },
    };
    await store.putRun(start);
    expect(await store.getRun(start.runId)).toEqual(start);
    expect(await backend.readRaw(namespace, start.runId)).not.toContain("threadTs");
    await store.close();
  });

  it("skips an entry it cannot read instead of failing the whole list", async () => {
    const { store, clock, namespace } = storeAt(Date.UTC(2025, 0, 1));
    const run = runRecord(`run_${unique()}`, clock.now);
    await store.putRun(run);
    await backend.writeRaw(namespace, "broken", "{not json");
    expect(await store.listRuns()).toEqual([run]);
    await store.close();
  });

  it("skips an entry of another format version, and leaves it for the release that wrote it", async () => {
    const { store, clock, namespace } = storeAt(Date.UTC(2025, 0, 1));
    const run = runRecord(`run_${unique()}`, clock.now);
    const later = runRecord(`run_${unique()}`, clock.now);
    await store.putRun(run);
    // What a later release might write: the same record under the next format version.
    const entry = { v: FORMAT_VERSION + 1, value: { record: later, expiresAt: clock.now + HOUR } };
    await backend.writeRaw(namespace, later.runId, JSON.stringify(entry));
    // An entry as it was written before the format had a version: not read either.
    const unstamped = runRecord(`run_${unique()}`, clock.now);
    await backend.writeRaw(namespace, unstamped.runId, JSON.stringify(unstamped));

    expect(await store.listRuns()).toEqual([run]);
    expect(await store.getRun(later.runId)).toBeUndefined();
    expect(await store.getRun(unstamped.runId)).toBeUndefined();
    expect(JSON.parse((await backend.readRaw(namespace, later.runId)) ?? "{}")).toEqual(entry);
    await store.close();
  });

  it("keeps no Stop request for a run that has already ended", async () => {
    const { store, clock } = storeAt(Date.UTC(2025, 0, 1));
    const run = runRecord(`run_${unique()}`, clock.now);
    await store.putRun(run);
    await store.deleteRun(run.runId);
    await store.requestStop(run.runId, personStop("U_LATE"));
    expect(await store.stopRequest(run.runId)).toBeUndefined();
    await store.close();
  });

  it("takes back a refused Stop request, but not one somebody else made since", async () => {
    const { store, clock } = storeAt(Date.UTC(2025, 0, 1));
    const run = runRecord(`run_${unique()}`, clock.now);
    await store.putRun(run);
    await store.requestStop(run.runId, personStop("U_FIRST"));
    await store.withdrawStop(run.runId, personStop("U_FIRST"));
    expect(await store.stopRequest(run.runId)).toBeUndefined();
    await store.requestStop(run.runId, personStop("U_SECOND"));
    await store.withdrawStop(run.runId, personStop("U_FIRST"));
    expect(await store.stopRequest(run.runId)).toEqual(personStop("U_SECOND"));
    await store.close();
  });
});
