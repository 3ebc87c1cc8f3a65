// Token and scope checks: which token a method needs and whether the granted scopes allow the call,
// answered as Slack does (not_authed, invalid_auth, missing_scope with needed/provided).
import type { SlackMethod } from "./methods/registry.ts";
import type { SlackArgs, SlackResponseBody } from "./types.ts";

export interface Tokens {
  readonly botToken: string;
  readonly appToken: string;
}

/** The failure for a wrong or missing token, or undefined when the token fits the method. */
export function tokenFailure(
  method: SlackMethod,
  token: string | undefined,
  tokens: Tokens,
): SlackResponseBody | undefined {
  if (method.token === "app") {
    return token === tokens.appToken ? undefined : { ok: false, error: "invalid_auth" };
  }
  if (token === undefined) return { ok: false, error: "not_authed" };
  if (token !== tokens.botToken) return { ok: false, error: "invalid_auth" };
  return undefined;
}

/** `missing_scope` when scope checks are on and none of the method's scopes is granted. */
export function scopeFailure(
  method: SlackMethod,
  args: SlackArgs,
  granted: ReadonlySet<string> | undefined,
): SlackResponseBody | undefined {
  if (!granted || method.scopes === undefined) return undefined;
  const needed = typeof method.scopes === "function" ? method.scopes(args) : method.scopes;
  if (needed.some((s) => granted.has(s))) return undefined;
  return {
    ok: false,
    error: "missing_scope",
    needed: needed.join(","),
    provided: [...granted].join(","),
  };
}
