/** People's display names for a thread read back (`users.info`), remembered a while. */
import { z } from "zod";
import type { SlackCalls } from "./replies.ts";

const NAMES_TTL_MS = 10 * 60_000;
const NAMES_MAX = 5000;

const UserInfo = z.object({
  user: z.object({
    name: z.string().nullish(),
    real_name: z.string().nullish(),
    profile: z
      .object({ display_name: z.string().nullish(), real_name: z.string().nullish() })
      .nullish(),
  }),
});

/** A person's display name (remembered a while); their id when Slack would not say. */
export function displayNames(
  slack: SlackCalls,
  now: () => number,
): (teamId: string, userId: string) => Promise<string> {
  const names = new Map<string, { name: string; until: number }>();
  return async (teamId, userId) => {
    const key = `${teamId}/${userId}`;
    const hit = names.get(key);
    if (hit && hit.until > now()) return hit.name;
    const token = await slack.token(teamId);
    const name = await slack
      .call(teamId, "users.info", () =>
        slack.client.users.info({ user: userId, ...(token === undefined ? {} : { token }) }),
      )
      .then(
        (res) => {
          const u = UserInfo.parse(res).user;
          return u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || userId;
        },
        () => userId,
      );
    if (names.size >= NAMES_MAX) names.delete(names.keys().next().value ?? "");
    names.set(key, { name, until: now() + NAMES_TTL_MS });
    return name;
  };
}
