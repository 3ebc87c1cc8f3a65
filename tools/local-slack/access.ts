// Token and scope checks: which token a method needs, whose it is, and whether the granted scopes
// allow the call, answered as Slack does (not_authed, invalid_auth, token_expired,
// token_revoked, missing_scope with needed/provided).
import type { SlackMethod } from "./methods/registry.ts";
import type { Caller, Tenancy } from "./tenancy.ts";
import type { SlackArgs, SlackResponseBody } from "./types.ts";

/**
 * Who the token speaks for when it fits the method, or the failure Slack answers: `not_authed`
 * without a token, `invalid_auth` for one it never issued, `token_expired` for a rotated one
 * past its time, `token_revoked` for one of a workspace the app was uninstalled from. App-level methods take the app token; token-less ones (OAuth) take none.
 */
export function authenticate(
  method: SlackMethod,
  token: string | undefined,
  appToken: string,
  tenancy: Tenancy,
): { readonly caller?: Caller; readonly failure?: SlackResponseBody } {
  if (method.token === "none") return {};
  if (method.token === "app") {
    return token === appToken ? {} : { failure: { ok: false, error: "invalid_auth" } };
  }
  if (token === undefined) return { failure: { ok: false, error: "not_authed" } };
  const caller = tenancy.identify(token);
  if (caller === "expired") return { failure: { ok: false, error: "token_expired" } };
  if (caller === "revoked") return { failure: { ok: false, error: "token_revoked" } };
  if (!caller) return { failure: { ok: false, error: "invalid_auth" } };
  return { caller };
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
