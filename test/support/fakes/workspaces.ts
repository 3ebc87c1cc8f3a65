/** One writer and one service for every workspace: the relay's `Workspaces` port in unit tests. */
import type { SlackWriter, TaskService, Workspaces } from "../../../src/runs/ports.ts";

export function oneWorkspace(writer: SlackWriter, service: TaskService): Workspaces {
  return { writer: () => writer, service: () => service };
}
