/**
 * Prompt directives of the Task Execution Service simulator.
 *
 * A prompt may carry any number of tokens of the form `[sim:name]` or `[sim:name=value]`,
 * anywhere in the text (names are case-insensitive). Every `[sim:...]` token is removed from
 * the text that the generated answer quotes; the raw prompt (tokens included) is what the
 * service stores, e.g. in the conversation history. Unknown names and invalid values are
 * ignored (the run's `directiveWarnings` lists them and the simulator logs them).
 *
 * "Sticky" directives describe the deployment rather than one run: set on a task, they also
 * apply to the follow-ups of the same thread until a follow-up sets them again.
 *
 * | Directive | Semantics |
 * |---|---|
 * | `format=contract\|agent\|minimal` | Sticky. Event shape of `realtime=true` streams (see the notes): `contract` `{"type":"content",...}`; `agent` `{"type":"assistant","content":"<JSON>","metadata":"<JSON>"}` with an acknowledgement first and a `complete` event repeating the whole text; `minimal` `{"role":"assistant","content":...}` then `{"status_type":"finish"}` and/or `{"status_type":"thread_run_end"}`. |
 * | `reconnect=replay\|continue` | Sticky. What a stream opened again on a running run sends. `replay`: every chunk from the start, with the original `chunk_id`/`sequence`. `continue`: only chunks produced from now on (the first stream of a run always starts from the start). |
 * | `delay=MS` | Sticky. Pause between two content chunks (0..60000). |
 * | `chunk=N` | Sticky. Average chunk size in characters (1..100000). Chunks split anywhere: mid-word, mid-fence, never inside a surrogate pair. |
 * | `keepalive=MS` | Sticky. Interval of `: keep-alive` comment lines on streams (0 = none). |
 * | `malformed` | Sticky. Streams also carry comments, `event:`/`id:`/`retry:` lines, data that is not JSON, JSON without a known type, unknown event types, acknowledgement events (their text contains `ACK-SHOULD-NOT-APPEAR`), events split over two `data:` lines, `data:` without a space and CRLF line ends. |
 * | `norealtime` | Sticky. `realtime=true` is refused: 400 `{"detail":"Realtime streaming is not available"}`. |
 * | `norealtime=json` | Sticky. `realtime=true` is ignored: the answer is the plain JSON long-poll result. |
 * | `length=N` | Answer of about N characters (0..2000000; N < 300 gives exactly N). Default: the `answerLength` option. |
 * | `hostile=KIND` | The answer is one hostile pattern repeated to `length` characters (default: the `answerLength` option): `brackets` (one line of `[`), `backticks`, `stars`, `underscores`, `angles` (`<!`), `pipes`, `nesting` (`> - [`), `lines` (tiny lines). For testing that no answer can freeze the app. |
 * | `files=N` | The run generates N files (0..50), cycling report.md, chart.png (a real PNG), data.json, table.csv, notes.txt. |
 * | `site`, `site=URL` | The run also generates a small web site: `index.html` (its `<title>` is "Landing page: " and the prompt's start) with `style.css` and `images/logo.png`. With a URL, the page also tries to load it every way a page can (stylesheet, script, image, frame, `fetch`, beacon, WebSocket, pop-up), and opens an `alert`. |
 * | `bigfile` | The run also generates `dataset-large.csv`, above the inline limit: `included_inline:false` and a `download_url` served by the simulator. |
 * | `empty` | The run completes with an empty `response.content` (no content events); `code_blocks` and files (at least 2) carry the result. |
 * | `mention` | The answer contains `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^S12345>`, `<@U12345>`, `<#C12345>`, `@here`. |
 * | `toolnoise` | Streams briefly carry a raw tool-execution JSON chunk (`{"tool":"str_replace",...}`) as content, after the 3rd chunk. It is not part of `response.content`. |
 * | `fail_create=STATUS[xK]` | Create Task answers STATUS (400..599) with a realistic body; nothing is created. With `xK`, only the first K requests with this exact prompt fail, later ones succeed. 429 and 503 carry `Retry-After: 7`; 429 also `X-RateLimit-Limit/-Remaining: 0/-Reset`. 422 has a list `detail`. |
 * | `credits` | Alias of `fail_create=402`. |
 * | `fail_continue=STATUS[xK]` | In a follow-up prompt: that follow-up answers STATUS (same rules as `fail_create`). In the task prompt: the follow-ups of the thread answer STATUS (all of them, or the first K). |
 * | `fail_poll=STATUS[xK]` | Get Task Results (JSON and realtime) for the thread answers STATUS while this run is the thread's latest (every time, or the first K times). |
 * | `run=fail` | The run ends `failed` after about 40% of the answer; the reason is in the result's `error` field, in the stream's final event and in the history's status message. |
 * | `norun` | The task is created (ids returned) but no run is recorded: Get Task Results answers `status:"no_run"` with `agent_run_id:null`, `response:null`. |
 * | `drop=N` | The first stream of the run is cut abruptly (half an event written, then the socket destroyed) after N content events (replayed events count). The run goes on. Default N when only `drops` is given: 3. |
 * | `drops=K` | Cut the first K stream connections of the run that way (default 1 when `drop` is given). |
 * | `stall=MS` | After the 3rd chunk the run produces nothing for MS ms (streams stay open, keep-alives go on), then continues. |
 * | `nofinal` | Streams end (server closes) without any final status / complete / finish event. |
 * | `lang=ja` | The answer in Japanese: each ASCII letter of it a kana (three UTF-8 bytes), its length and Markdown (code fences included) kept. |
 * | `abuse=KIND` | The service misbehaves on purpose, to show that no answer can take the app's memory. `comments`: every stream of the run is one event that never ends, `data:` lines of 60,000 characters each followed by a `:` comment line and never by a blank line (the run itself goes on and completes). `json`: `realtime=true` is answered `application/json` with a body that never ends (a result whose text grows forever). `runaway`: the run never ends on its own; it produces its answer again and again until stopped. |
 * | `bigfiles=NxMB` | The run also generates N files (1..20) of MB MiB (1..200) each, `clip-K.mp4`, inlined (base64) whatever their size, as a service that ignores its inline limit. Their content is written as it is sent. |
 */
import { z } from "zod";

export type StreamFormat = "contract" | "agent" | "minimal";
export type ReconnectMode = "replay" | "continue";

/** A forced error answer: STATUS every time, or only the first `times` times. */
export interface FailSpec {
  status: number;
  times: number | undefined;
}

export interface Directives {
  format?: StreamFormat;
  reconnect?: ReconnectMode;
  delay?: number;
  chunk?: number;
  keepalive?: number;
  malformed?: boolean;
  norealtime?: "refuse" | "json";
  length?: number;
  hostile?: HostileKind;
  files?: number;
  bigfile?: boolean;
  /** A generated web site; `external` is a URL its page tries to reach. */
  site?: { external?: string };
  empty?: boolean;
  mention?: boolean;
  toolnoise?: boolean;
  failCreate?: FailSpec;
  failContinue?: FailSpec;
  failPoll?: FailSpec;
  runFail?: boolean;
  norun?: boolean;
  drop?: number;
  drops?: number;
  stall?: number;
  nofinal?: boolean;
  lang?: "ja";
  abuse?: Abuse;
  bigfiles?: { count: number; mb: number };
}

/** How `abuse=KIND` misbehaves (see the table above). */
export type Abuse = "comments" | "json" | "runaway";

/** The repeated unit of each `hostile=KIND` answer. */
export const HOSTILE_UNITS = {
  brackets: "[",
  backticks: "`",
  stars: "*",
  underscores: "_",
  angles: "<!",
  pipes: "|",
  nesting: "> - [",
  lines: "a\n",
} as const;
export type HostileKind = keyof typeof HOSTILE_UNITS;

export interface ParsedPrompt {
  /** The prompt without its `[sim:...]` tokens, whitespace tidied. */
  text: string;
  directives: Directives;
  warnings: string[];
}

/** Directives that describe the deployment and carry over to the follow-ups of a thread. */
export const STICKY_KEYS = [
  "format",
  "reconnect",
  "delay",
  "chunk",
  "keepalive",
  "malformed",
  "norealtime",
] as const satisfies readonly (keyof Directives)[];

const TOKEN = /\[sim:([a-zA-Z_]+)(?:=([^\]]*))?\]/g;

const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: "expected a whole number" })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const failSpec = z
  .string()
  .regex(/^\d{3}(?:[x*]\d+)?$/i, { error: "expected STATUS or STATUSxK" })
  .transform((v): FailSpec => {
    const [status, times] = v.toLowerCase().split(/[x*]/);
    return { status: Number(status), times: times === undefined ? undefined : Number(times) };
  })
  .refine((f) => f.status >= 400 && f.status <= 599, { error: "status must be 400..599" })
  .refine((f) => f.times === undefined || f.times >= 1, { error: "K must be at least 1" });

const flag = z.undefined({ error: "takes no value" }).transform(() => true);

/** How each directive's value is read; `undefined` value means the bare `[sim:name]` form. */
const parsers: Record<string, (value: string | undefined, d: Directives) => void> = {
  format: (v, d) => {
    d.format = z.enum(["contract", "agent", "minimal"]).parse(v);
  },
  reconnect: (v, d) => {
    d.reconnect = z.enum(["replay", "continue"]).parse(v);
  },
  delay: (v, d) => {
    d.delay = int(0, 60_000).parse(v);
  },
  chunk: (v, d) => {
    d.chunk = int(1, 100_000).parse(v);
  },
  keepalive: (v, d) => {
    d.keepalive = int(0, 3_600_000).parse(v);
  },
  malformed: (v, d) => {
    d.malformed = flag.parse(v);
  },
  norealtime: (v, d) => {
    d.norealtime = v === undefined ? "refuse" : z.literal("json").parse(v);
  },
  length: (v, d) => {
    d.length = int(0, 2_000_000).parse(v);
  },
  hostile: (v, d) => {
    d.hostile = z.enum(Object.keys(HOSTILE_UNITS) as [HostileKind, ...HostileKind[]]).parse(v);
  },
  files: (v, d) => {
    d.files = int(0, 50).parse(v);
  },
  site: (v, d) => {
    d.site = v === undefined ? {} : { external: z.url({ protocol: /^https?$/ }).parse(v) };
  },
  bigfile: (v, d) => {
    d.bigfile = flag.parse(v);
  },
  empty: (v, d) => {
    d.empty = flag.parse(v);
  },
  mention: (v, d) => {
    d.mention = flag.parse(v);
  },
  toolnoise: (v, d) => {
    d.toolnoise = flag.parse(v);
  },
  fail_create: (v, d) => {
    d.failCreate = failSpec.parse(v);
  },
  credits: (v, d) => {
    flag.parse(v);
    d.failCreate = { status: 402, times: undefined };
  },
  fail_continue: (v, d) => {
    d.failContinue = failSpec.parse(v);
  },
  fail_poll: (v, d) => {
    d.failPoll = failSpec.parse(v);
  },
  run: (v, d) => {
    d.runFail = z
      .literal("fail")
      .transform(() => true)
      .parse(v);
  },
  norun: (v, d) => {
    d.norun = flag.parse(v);
  },
  drop: (v, d) => {
    d.drop = int(0, 1_000_000).parse(v);
  },
  drops: (v, d) => {
    d.drops = int(0, 1_000).parse(v);
  },
  stall: (v, d) => {
    d.stall = int(0, 3_600_000).parse(v);
  },
  nofinal: (v, d) => {
    d.nofinal = flag.parse(v);
  },
  lang: (v, d) => {
    d.lang = z.literal("ja").parse(v);
  },
  abuse: (v, d) => {
    d.abuse = z.enum(["comments", "json", "runaway"]).parse(v);
  },
  bigfiles: (v, d) => {
    const [count, mb] = z
      .string()
      .regex(/^\d+x\d+$/i, { error: "expected NxMB, e.g. 6x50" })
      .parse(v)
      .toLowerCase()
      .split("x")
      .map(Number);
    d.bigfiles = {
      count: z.number().int().min(1).max(20).parse(count),
      mb: z.number().int().min(1).max(200).parse(mb),
    };
  },
};

export function parseDirectives(prompt: string): ParsedPrompt {
  const directives: Directives = {};
  const warnings: string[] = [];
  for (const match of prompt.matchAll(TOKEN)) {
    const name = (match[1] ?? "").toLowerCase();
    const value = match[2];
    const parse = parsers[name];
    if (parse === undefined) {
      warnings.push(`unknown directive [sim:${name}] ignored`);
      continue;
    }
    try {
      parse(value, directives);
    } catch (error) {
      const why =
        error instanceof z.ZodError ? error.issues.map((i) => i.message).join("; ") : "invalid";
      warnings.push(`directive ${match[0]} ignored: ${why}`);
    }
  }
  const text = prompt
    .replace(TOKEN, " ")
    .replace(/[ \t]{2,}/g, " ")
    .replace(/ *\n */g, "\n")
    .trim();
  return { text, directives, warnings };
}

/** The directives a run uses: the thread's sticky ones, overridden by its own. */
export function mergeSticky(sticky: Directives, own: Directives): Directives {
  return { ...pickSticky(sticky), ...own };
}

export function pickSticky(d: Directives): Directives {
  const out: Directives = {};
  for (const key of STICKY_KEYS) {
    if (d[key] !== undefined) Object.assign(out, { [key]: d[key] });
  }
  return out;
}
