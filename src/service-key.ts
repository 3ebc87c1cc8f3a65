/**
 * The task service as each workspace's account: the workspace's own key, else TASK_API_KEY when
 * lent, asked for at each request (a key an admin changes applies to the next call).
 */
import type { ByteBudget } from "./util/byte-budget.ts";
import type { Logger } from "pino";
import { Agent } from "undici";
import type { Config } from "./config/config.ts";
import type { PrometheusMetrics } from "./metrics.ts";
import {
  createTaskServiceClient,
  type ServiceResponseInfo,
  type TaskService,
} from "./service/client.ts";
import { ServiceKeyMissingError, ServiceKeyUnreadableError } from "./service/errors.ts";
import { CONTROL_POOL, SERVICE_POOL } from "./service/pools.ts";
import { teamPolicy } from "./slack/gate/team.ts";
import { rememberedOrganisation } from "./slack/workspace-tokens.ts";
import { type ServiceKeyStore, serviceKeyStoreFor } from "./store/service-keys.ts";
import type { ThreadStore } from "./store/types.ts";
import type { Outbound } from "./util/proxy.ts";

/**
 * The service client's `apiKey` for one workspace. A stored key that no longer opens fails (its
 * admin must set it again) rather than silently charge the app's account; `onUnreadable` hears why.
 */
export function keySupplier(
  keys: Pick<ServiceKeyStore, "get"> | undefined,
  teamId: string,
  fallback: string | undefined | (() => Promise<string | undefined>),
  onUnreadable: (why: string) => void = () => undefined,
): () => Promise<string> {
  return async () => {
    const stored = keys ? await keys.get(teamId) : { state: "none" as const };
    if (stored.state === "set") return stored.key;
    if (stored.state === "unreadable") {
      onUnreadable(stored.why);
      throw new ServiceKeyUnreadableError();
    }
    const lent = typeof fallback === "function" ? await fallback() : fallback;
    if (lent !== undefined && lent !== "") return lent;
    throw new ServiceKeyMissingError();
  };
}

export function openServices(
  config: Config,
  metrics: PrometheusMetrics,
  outbound: Outbound,
  store: ThreadStore,
  logger: Logger,
  readBudget: ByteBudget,
) {
  const policy = teamPolicy(config.slack.oauth);
  // Whether a workspace may spend TASK_API_KEY: with many workspaces, if TASK_API_KEY_FOR says.
  const lends = async (teamId: string) =>
    config.service.apiKey !== undefined &&
    policy.lendsAppKey(teamId, await rememberedOrganisation(store, teamId));
  const options = {
    readBudget,
    baseUrl: config.service.baseUrl,
    streamIdleTimeoutMs: config.service.streamIdleTimeoutS * 1000,
    // A result (without its files' content) holds the answer's text, JSON-escaped: at most a
    // few times its UTF-8 bytes, whatever the text.
    maxAnswerBytes: 4 * config.service.memoryMb.answer * 1024 * 1024 + 1024 * 1024,
    onResponse: (info: ServiceResponseInfo) => metrics.serviceResponse(info),
    dispatcher: outbound.serviceDispatcher ?? new Agent(SERVICE_POOL),
    controlDispatcher: outbound.serviceControlDispatcher ?? new Agent(CONTROL_POOL),
  };
  const appKey = config.service.apiKey;
  const serviceKeys = serviceKeyStoreFor(store, config.encryptionKeys);
  const service = createTaskServiceClient({
    ...options,
    apiKey: keySupplier(undefined, "", appKey),
  });
  return {
    service,
    serviceFor: (teamId: string): TaskService =>
      createTaskServiceClient({
        ...options,
        apiKey: keySupplier(
          serviceKeys,
          teamId,
          async () => ((await lends(teamId)) ? appKey : undefined),
          (why) =>
            logger.error(
              { team: teamId, why },
              "refused the workspace's stored Task service key: it cannot be read, and its admin must set it again (Workspace settings)",
            ),
        ),
      }),
    workspaceKeys: serviceKeys && { store: serviceKeys, checker: service, fallback: lends },
  };
}
