/**
 * A link whose label looks like an address of another host is not shown as written: its label
 * is followed by the host it really goes to, on every surface an answer reaches (the run's
 * `markdown` blocks, the prompt, the History view and notification text, in mrkdwn). Ordinary
 * labels, and labels naming the target's own host, are left alone; code is left as written;
 * every pass stays linear in the text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mrkdwnExcerpt, notificationText, toMrkdwn } from "../../src/view/mrkdwn.ts";
import { renderPrompt, renderRun } from "../../src/view/render.ts";
import { misleadingHost, revealLinkHosts, UNVERIFIED } from "../../src/view/scan/link-hosts.ts";
import { renderHistoryView } from "../../src/view/task-views.ts";
import { markdown } from "../fuzz/arbitraries.ts";
import { fill } from "../support/hostile-text.ts";
import { settledRatio } from "../support/linear-time.ts";

describe("misleadingHost", () => {
  it.each([
    ["https://sso.corp", "https://evil.example", "evil.example"],
    ["sso.corp", "https://evil.example/login", "evil.example"],
    ["www.bank.com/login", "http://x.test", "x.test"],
    ["**https://sso.corp/login**", "https://evil.example", "evil.example"],
    ["`sso.corp`", "https://evil.example:8443/", "evil.example:8443"],
    ["https://sso.corp login page", "https://evil.example", "evil.example"],
    ["10.0.0.1:8080", "https://evil.example", "evil.example"],
    ["**sso**.corp", "https://evil.example", "evil.example"],
    ["sso.corp(1)", "https://evil.example", "evil.example"],
    ["Node.js", "https://nodejs.org", "nodejs.org"], // a name that reads as a host
    // What a URL parser opens: the user info before "@" is not the host.
    ["https://sso.corp", "https://sso.corp@evil.example/", "evil.example"],
    ["sso.corp@evil.example", "https://evil.example", "evil.example"],
    // Hidden or look-alike characters in the label.
    ["sso\u200B.corp", "https://evil.example", "evil.example"],
    ["sso\\.corp", "https://evil.example", "evil.example"],
    ["sso&#46;corp", "https://evil.example", "evil.example"],
    ["sso\uFF0Ecorp", "https://evil.example", "evil.example"],
    ["bücher.example", "https://evil.example", "evil.example"],
    // A label that shows reversed may show a host it does not name: always tagged.
    ["\u202Eproc.oss", "https://proc.oss", "proc.oss"],
    // A target whose host is written with character references is not read as written.
    ["sso.corp", "https://sso.corp&#64;evil.example/", UNVERIFIED],
    ["sso.corp", "https://sso.corp&#47;@evil.example/", UNVERIFIED],
    ["sso.corp", "<https://evil.example>", "evil.example"],
    ["sso.corp", "https://[::1]:8787/", "[::1]:8787"],
  ])("tags [%s](%s) with %s", (label, target, host) => {
    expect(misleadingHost(label, target)).toBe(host);
  });

  it.each([
    ["the docs", "https://evil.example"],
    ["e.g. this", "https://evil.example"],
    ["version 2.0", "https://evil.example"],
    ["v1.2.3", "https://evil.example"],
    ["a.b", "mailto:ceo@evil.example"],
    ["sso.corp", "/relative/path"],
    ["sso.corp", "https://sso.corp/login"],
    ["SSO.Corp", "https://sso.CORP./"],
    ["https://www.example.com/docs", "https://example.com/docs"],
    ["example.com", "https://www.example.com"],
    ["docs.rs/foo:1.0", "https://docs.rs/foo/1.0"],
    ["docs_site.example", "https://docs_site.example"],
    ["bücher.example", "https://xn--bcher-kva.example/"],
    ["https://sso.corp (evil.example)", "https://evil.example"], // tagged already
    ["", "https://evil.example"],
  ])("leaves [%s](%s) as written", (label, target) => {
    expect(misleadingHost(label, target)).toBeUndefined();
  });
});

describe("revealLinkHosts: Markdown for Slack's markdown block", () => {
  it("follows a label that names another host with the real one, inside the label", () => {
    expect(revealLinkHosts("Sign in at [https://sso.corp](https://evil.example/login).")).toBe(
      "Sign in at [https://sso.corp (evil.example)](https://evil.example/login).",
    );
    expect(revealLinkHosts("[sso.corp](https://evil.example) and [the docs](https://x.test)")).toBe(
      "[sso.corp (evil.example)](https://evil.example) and [the docs](https://x.test)",
    );
    expect(revealLinkHosts('![www.bank.com/login](http://x.test "Bank")')).toBe(
      '![www.bank.com/login (x.test)](http://x.test "Bank")',
    );
    // A label may hold brackets; a label over two lines is one label.
    expect(revealLinkHosts("[sso.corp[1]](https://evil.example)")).toBe(
      "[sso.corp[1] (evil.example)](https://evil.example)",
    );
    expect(revealLinkHosts("[\nhttps://sso.corp\n](https://evil.example)")).toBe(
      "[\nhttps://sso.corp\n (evil.example)](https://evil.example)",
    );
    // A host with Markdown punctuation in it is shown as text, not markup.
    expect(revealLinkHosts("[sso.corp](https://a_b*c.example)")).toBe(
      "[sso.corp (a\\_b\\*c.example)](https://a_b*c.example)",
    );
  });

  it("leaves ordinary labels, a label of the target's own host, and code as written", () => {
    for (const text of [
      "[the docs](https://evil.example) [sso.corp](https://sso.corp/x)",
      "`[sso.corp](https://evil.example)` and ``a ` [sso.corp](https://evil.example) ``",
      "```md\n[sso.corp](https://evil.example)\n```",
      "~~~\n```\n[sso.corp](https://evil.example)\n~~~",
      "[a [sso.corp] b](https://evil.example)",
      "no link here: sso.corp (https://evil.example)",
    ]) {
      expect(revealLinkHosts(text)).toBe(text);
    }
    // After the code block, links are read again.
    expect(revealLinkHosts("```\nx\n```\n[sso.corp](https://evil.example)")).toBe(
      "```\nx\n```\n[sso.corp (evil.example)](https://evil.example)",
    );
  });

  it("tags each link once, however often it is applied (property)", () => {
    const link = fc
      .tuple(
        fc.constantFrom("https://sso.corp", "sso.corp", "www.bank.com/login", "docs", "a.b"),
        fc.constantFrom("https://evil.example", "http://x.test/a", "https://sso.corp", "mailto:x"),
      )
      .map(([label, url]) => `[${label}](${url})`);
    const text = fc
      .array(fc.oneof(link, markdown, fc.constantFrom("`", "```\n", "\n", "[", "]")), {
        maxLength: 12,
      })
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, (t) => {
        const once = revealLinkHosts(t);
        expect(revealLinkHosts(once)).toBe(once);
        // It only adds text: every character of the answer is still there, in order.
        let at = 0;
        for (const ch of t) at = once.indexOf(ch, at) + 1;
        expect(at).toBeGreaterThan(t === "" ? -1 : 0);
      }),
    );
  });
});

describe("every surface an answer reaches", () => {
  const answer = "Log in at [https://sso.corp](https://evil.example/login) to see it.";
  const tagged = "https://sso.corp (evil.example)";

  it("the run's messages, while running and once done, and their notification text", () => {
    for (const state of ["running", "completed"] as const) {
      const [message] = renderRun({ text: answer, state, elapsedMs: 1000, stopValue: "{}" });
      const block = message?.blocks[0];
      expect(block).toMatchObject({ type: "markdown" });
      expect(JSON.stringify(block)).toContain(`[${tagged}](https://evil.example/login)`);
      expect(message?.text).toContain(`<https://evil.example/login|${tagged}>`);
    }
  });

  it("the prompt that opens the thread", () => {
    const prompt = renderPrompt("U1", answer);
    expect(JSON.stringify(prompt.blocks)).toContain(`[${tagged}](https://evil.example/login)`);
    expect(prompt.text).toContain(`|${tagged}>`);
  });

  it("mrkdwn: the History view, excerpts, notifications", () => {
    expect(toMrkdwn(answer)).toBe(`Log in at <https://evil.example/login|${tagged}> to see it.`);
    expect(mrkdwnExcerpt(answer, 3000)).toContain(`|${tagged}>`);
    expect(notificationText(answer, 300)).toContain(`|${tagged}>`);
    const view = renderHistoryView(
      { channelId: "C1", threadTs: "1.2", kind: "history", page: 1 },
      [{ role: "assistant", content: answer }],
      { page: 1, hasNext: false },
    );
    expect(JSON.stringify(view)).toContain(`|${tagged}>`);
    // Ordinary labels stay as they were.
    expect(toMrkdwn("[the docs](https://x.test)")).toBe("<https://x.test|the docs>");
  });
});

describe("revealLinkHosts takes linear time", () => {
  const N = 16 * 1024;
  const shapes: [string, (n: number) => string][] = [
    ["host-like links to another host", (n) => fill("[sso.corp](https://evil.example) ", n)],
    ["nested labels", (n) => `${fill("[a.b", n >> 1)}${fill("](https://c.d)", n - (n >> 1))}`],
    ["a long label", (n) => `[${fill("a.b/", n - 30)}](https://c.d)`],
    ["unclosed targets", (n) => fill("[a.b](https://c", n)],
    ["brackets and backticks", (n) => `](${fill("[`]`", n)}`],
    [
      "code blocks between links",
      (n) => fill("```\n[a.b](https://c.d)\n```\n[a.b](http://x)\n", n),
    ],
    ["lines of marks", (n) => `](\n${fill("[\n", n)}`],
  ];

  function fastest(fn: () => unknown): number {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      fn();
      best = Math.min(best, performance.now() - started);
    }
    return Math.max(best, 2);
  }

  it.each(shapes)("on %s", (_name, make) => {
    const small = make(N);
    const large = make(4 * N);
    revealLinkHosts(small); // warm-up
    const ratio = settledRatio(
      () => fastest(() => revealLinkHosts(large)) / fastest(() => revealLinkHosts(small)),
      10,
    );
    expect(ratio).toBeLessThanOrEqual(10);
  });
});
