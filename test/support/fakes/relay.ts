/**
 * A relay as one instance runs it, on in-process doubles (Slack writer, task service, the
 * memory store) and a fake clock, for the unit tests of a run's start, adoption and resume.
 * `ended` lists every run's outcome as the relay reports it.
 */
import { pino } from "pino";
import { Relay, type RelayOptions, type RunOutcome } from "../../../src/runs/relay.ts";
import { createMemoryStore } from "./memory-store.ts";
import type { ThreadStore } from "../../../src/store/types.ts";
import { runningThreads } from "../../../src/threads/running.ts";
import { FakeClock } from "../fake-clock.ts";
import { FakeSlackWriter } from "./slack-writer.ts";
import { FakeTaskService } from "./task-service.ts";
import { oneWorkspace } from "./workspaces.ts";

export interface RelayOnFakes {
  readonly writer: FakeSlackWriter;
  readonly service: FakeTaskService;
  readonly store: ThreadStore;
  readonly clock: FakeClock;
  readonly relay: Relay;
  readonly ended: RunOutcome[];
}

export function relayOnFakes(
  options: { instanceId?: string; workflowSteps?: RelayOptions["workflowSteps"] } = {},
): RelayOnFakes {
  const writer = new FakeSlackWriter();
  const service = new FakeTaskService();
  const store = createMemoryStore();
  const clock = new FakeClock();
  const ended: RunOutcome[] = [];
  const relay = new Relay({
    workspaces: oneWorkspace(writer, service),
    store,
    threads: runningThreads({ store, now: () => clock.now() }),
    instanceId: options.instanceId ?? "i1",
    logger: pino({ level: "silent" }),
    follow: { reconnectDelayMs: 1, pollTimeoutS: 1 },
    clock,
    ...(options.workflowSteps ? { workflowSteps: options.workflowSteps } : {}),
  });
  relay.onEnded(async (o) => void ended.push(o));
  return { writer, service, store, clock, relay, ended };
}
