/** Facts about URLs the configuration checks: whether one stays on this machine, its password. */

/** localhost, 127.0.0.0/8 or ::1, as a parsed URL spells them (IPv4 normalised, IPv6 in brackets). */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** One problem per URL that would send what it `carries` in plain http:// to another machine. */
export function plainHttpProblems(
  urls: Readonly<Record<string, readonly [url: string | undefined, carries: string]>>,
  optOut: string,
  allowed: readonly string[] = [],
): string[] {
  return Object.entries(urls).flatMap(([name, [url, carries]]) => {
    if (url === undefined || !/^http:/i.test(url) || !URL.canParse(url)) return [];
    const host = new URL(url).hostname;
    if (isLoopbackHost(host) || allowed.includes(host.replace(/\.$/, ""))) return [];
    return [
      `${name} uses plain http:// to ${host}, so ${carries} would cross the network unencrypted: use https://, or set ${optOut} on a network you trust (http:// is always allowed to localhost, 127.0.0.0/8 and ::1)`,
    ];
  });
}

/** A URL's password, decoded, or as written in it (percent-encoded) with `raw`. */
export function urlPassword(url: string, options: { raw?: boolean } = {}): string | undefined {
  try {
    const p = new URL(url).password;
    if (!p) return undefined;
    return options.raw ? p : decodeURIComponent(p);
  } catch {
    return undefined;
  }
}
