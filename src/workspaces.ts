/**
 * The relay's `Workspaces` port, made on first use: a Slack writer with the workspace's bot token
 * and rate budget, and its task service client.
 */
import type { WebClient } from "@slack/web-api";
import type { Dispatcher } from "undici";
import type { SlackWriter, TaskService, Workspaces } from "./runs/ports.ts";
import type { RecordStore } from "./store/types.ts";
import { getUsagePolicy } from "./store/usage-policy.ts";
import { scheduledWriter } from "./slack/scheduled-writer.ts";
import type { SlackScheduler } from "./slack/scheduler/index.ts";
import { webClientWriter } from "./slack/web-writer.ts";
import type { BotTokens } from "./slack/workspace-tokens.ts";

export interface WorkspaceWiring extends Workspaces {
  forget(teamId: string): void;
}

export function openWorkspaces(parts: {
  readonly client: WebClient;
  readonly tokens: Pick<BotTokens, "botToken" | "forget">;
  readonly scheduler: SlackScheduler;
  readonly serviceFor: (teamId: string) => TaskService;
  /** To Slack's upload URLs (the outbound proxy, when there is one). */
  readonly uploadDispatcher?: Dispatcher | undefined;
  /** Usage policies (whether the app may join public channels). */
  readonly records: Pick<RecordStore, "getRecord">;
}): WorkspaceWiring {
  const mayJoin = (teamId: string): Promise<boolean> =>
    getUsagePolicy(parts.records, teamId).then(
      (policy) => policy.joinPublicChannels,
      () => false, // unreadable: every task is refused anyway, and says so
    );
  const writers = new Map<string, SlackWriter>();
  const services = new Map<string, TaskService>();
  return {
    writer(teamId) {
      let writer = writers.get(teamId);
      if (!writer) {
        const inner = webClientWriter(
          parts.client,
          () => parts.tokens.botToken(teamId),
          parts.uploadDispatcher,
        );
        // Budgets are per workspace (Slack's rate limits are per app per workspace).
        const scheduled = scheduledWriter(inner, parts.scheduler, teamId);
        // Not allowed, it cannot join: the person is told to invite it (or ask an admin).
        const join = async (channelId: string) =>
          (await mayJoin(teamId)) && scheduled.join(channelId);
        writer = { ...scheduled, join };
        writers.set(teamId, writer);
      }
      return writer;
    },
    service(teamId) {
      const service = services.get(teamId) ?? parts.serviceFor(teamId);
      services.set(teamId, service);
      return service;
    },
    forget(teamId) {
      writers.delete(teamId);
      services.delete(teamId);
      parts.tokens.forget(teamId);
    },
  };
}
