/**
 * Which Task service API key a workspace's requests carry: its own (set by an admin, sealed in
 * the store), else the app's TASK_API_KEY, else none; asked for at each request, so a key an
 * admin changes applies to the next call. Pure apart from reading the store.
 */
import { ServiceKeyMissingError, ServiceKeyUnreadableError } from "./service/errors.ts";
import type { ServiceKeyStore } from "./store/service-keys.ts";

/**
 * The key supplier for one workspace (the service client's `apiKey`). A stored key that can no
 * longer be opened is not replaced by the app's key: it fails (its admin is asked to set it
 * again) rather than charging another account without saying so. `fallback` is the app's key,
 * or asks for it when whether the workspace may use it depends on the workspace.
 */
export function keySupplier(
  keys: Pick<ServiceKeyStore, "get"> | undefined,
  teamId: string,
  fallback: string | undefined | (() => Promise<string | undefined>),
): () => Promise<string> {
  return async () => {
    const stored = keys ? await keys.get(teamId) : { state: "none" as const };
    if (stored.state === "set") return stored.key;
    if (stored.state === "unreadable") throw new ServiceKeyUnreadableError();
    const lent = typeof fallback === "function" ? await fallback() : fallback;
    if (lent !== undefined && lent !== "") return lent;
    throw new ServiceKeyMissingError();
  };
}
