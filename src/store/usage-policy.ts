/** A workspace's usage policy and the service's last refusal of its account (402, 429), as records. */
import { z } from "zod";
import type { RecordStore } from "./types.ts";

/** A user group (`S…`), a channel (`C…`, `G…`). */
const GroupId = z.string().regex(/^S[A-Z0-9]{2,30}$/);
const ChannelId = z.string().regex(/^[CG][A-Z0-9]{2,30}$/);

/** Tasks per person per hour (0: no quota). */
export const QUOTA_MAX = 1000;

export const UsagePolicy = z.object({
  /** Who may start and continue tasks. */
  who: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("everyone") }),
    z.object({ kind: z.literal("groups"), groupIds: z.array(GroupId).min(1).max(100) }),
  ]),
  /** `all`: every channel and direct messages. */
  where: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("all") }),
    z.object({ kind: z.literal("channels"), channelIds: z.array(ChannelId).min(1).max(100) }),
  ]),
  /** Follow-ups included. */
  perUserPerHour: z.number().int().min(0).max(QUOTA_MAX),
  /**
   * Whether the app joins a public channel it is not in (`conversations.join`) instead of asking
   * to be invited: once in, it reads threads there (thread context), so it is the admins' call.
   */
  joinPublicChannels: z.boolean(),
});
export type UsagePolicy = z.infer<typeof UsagePolicy>;

export const DEFAULT_USAGE_POLICY: UsagePolicy = {
  who: { kind: "everyone" },
  where: { kind: "all" },
  perUserPerHour: 0,
  joinPublicChannels: false,
};

/** Written by a newer version, or damaged. */
export class UsagePolicyUnreadableError extends Error {
  constructor(teamId: string) {
    super(`the usage policy of workspace ${teamId} is unreadable`);
    this.name = "UsagePolicyUnreadableError";
  }
}

const policyKey = (teamId: string) => `t:${teamId}:usage-policy`;

export async function getUsagePolicy(
  records: Pick<RecordStore, "getRecord">,
  teamId: string,
): Promise<UsagePolicy> {
  const raw = await records.getRecord(policyKey(teamId));
  if (raw === undefined || raw === null) return DEFAULT_USAGE_POLICY;
  const parsed = UsagePolicy.safeParse(raw);
  if (!parsed.success) throw new UsagePolicyUnreadableError(teamId);
  return parsed.data;
}

export async function putUsagePolicy(
  records: Pick<RecordStore, "putRecord">,
  teamId: string,
  policy: UsagePolicy,
): Promise<void> {
  await records.putRecord(policyKey(teamId), UsagePolicy.parse(policy));
}

/** The service's last refusal of the workspace's account, for its admins' App Home. */
export const ServiceAlert = z.object({
  status: z.union([z.literal(402), z.literal(429)]),
  at: z.number(), // ms since the epoch
  /** A 429's reset time (ms since the epoch), from `Retry-After` or `X-RateLimit-Reset`. */
  resetAt: z.number().optional(),
});
export type ServiceAlert = z.infer<typeof ServiceAlert>;

/** A 402 is shown for a day at most (or until a task starts again). */
const CREDITS_STALE_MS = 24 * 3_600_000;
/** A 429 is shown until its reset time, or this long when the service gave none. */
const RATE_STALE_MS = 15 * 60_000;

function alertIsStale(alert: ServiceAlert, now: number): boolean {
  if (alert.status === 402) return now - alert.at > CREDITS_STALE_MS;
  return now > (alert.resetAt ?? alert.at + RATE_STALE_MS);
}

const alertKey = (teamId: string) => `t:${teamId}:service-alert`;

/** Only when still worth showing at `now`. */
export async function getServiceAlert(
  records: Pick<RecordStore, "getRecord">,
  teamId: string,
  now: number,
): Promise<ServiceAlert | undefined> {
  const parsed = ServiceAlert.safeParse(await records.getRecord(alertKey(teamId)));
  if (!parsed.success || alertIsStale(parsed.data, now)) return undefined;
  return parsed.data;
}

export async function putServiceAlert(
  records: Pick<RecordStore, "putRecord">,
  teamId: string,
  alert: ServiceAlert,
): Promise<void> {
  await records.putRecord(alertKey(teamId), ServiceAlert.parse(alert));
}

/** A write only when there is one. */
export async function clearServiceAlert(
  records: Pick<RecordStore, "getRecord" | "deleteRecord">,
  teamId: string,
): Promise<void> {
  const key = alertKey(teamId);
  if ((await records.getRecord(key)) !== undefined) await records.deleteRecord(key);
}
