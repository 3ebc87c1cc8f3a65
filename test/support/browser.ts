/**
 * A minimal browser for the OAuth install flow: GETs that do not follow redirects, and a cookie
 * jar shared by every 127.0.0.1 port (browsers do not tell cookies apart by port), so the
 * app's state cookie and the Slack double's session cookie travel as they would.
 */

export interface Page {
  readonly status: number;
  readonly body: string;
  /** Where a redirect points, if it is one. */
  readonly location: string | undefined;
  readonly setCookies: readonly string[];
}

export class Browser {
  readonly cookies = new Map<string, string>();

  /** Signs in, e.g. to the Slack double (`name=value` as a Set-Cookie or Cookie header has it). */
  setCookie(pair: string): void {
    const [name, ...value] = pair.split("=");
    if (name) this.cookies.set(name.trim(), value.join("="));
  }

  async get(url: string): Promise<Page> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(url, {
      redirect: "manual",
      headers: cookie === "" ? {} : { cookie },
    });
    const setCookies = res.headers.getSetCookie();
    for (const header of setCookies) this.#store(header);
    return {
      status: res.status,
      body: await res.text(),
      location: res.headers.get("location") ?? undefined,
      setCookies,
    };
  }

  /** Keeps a Set-Cookie, or forgets it when it is expired (Max-Age=0 or an Expires past). */
  #store(header: string): void {
    const [pair = "", ...attributes] = header.split(";").map((s) => s.trim());
    const [name, ...value] = pair.split("=");
    if (!name) return;
    const expired = attributes.some((a) => {
      const [key = "", v = ""] = a.split("=");
      if (key.toLowerCase() === "max-age") return Number(v) <= 0;
      if (key.toLowerCase() === "expires") return Date.parse(v) <= Date.now();
      return false;
    });
    if (expired) this.cookies.delete(name);
    else this.cookies.set(name, value.join("="));
  }
}

/** The "Add to Slack" link of an install page (HTML entities decoded). */
export function addToSlackLink(html: string): string {
  const href = /<a href="([^"]+)"/.exec(html)?.[1];
  if (href === undefined) throw new Error(`no link in the install page:\n${html}`);
  return href.replaceAll("&amp;", "&").replaceAll("&#x27;", "'").replaceAll("&quot;", '"');
}
