/** Files a simulated run "generates" in its workspace, deterministic from a seed. */
import { crc32, deflateSync } from "node:zlib";
import { lookup } from "mime-types";
import { seededRandom } from "./answers.ts";

export interface GeneratedFile {
  /** `<thread_id>:/workspace/<path>`: contains ':' and '/'. */
  fileId: string;
  name: string;
  /** Absolute path in the run's workspace, e.g. `/workspace/output/report.md`. */
  path: string;
  /** Media type, from the extension of `name` (mime-types). */
  type: string;
  /** True when `content` is text (served with encoding utf-8, otherwise base64). */
  text: boolean;
  content: Buffer;
  createdAt: number;
  /** Sent inline whatever its size (`bigfiles`: a service that ignores its inline limit). */
  alwaysInline?: boolean;
}

const TEXT_TYPES = /^(text\/|application\/(json|xml)|image\/svg\+xml)/;

export function isTextType(type: string): boolean {
  return TEXT_TYPES.test(type);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A small valid RGB PNG (a diagonal gradient whose colours depend on the seed). */
export function makePng(seed: number, width = 16, height = 16): Buffer {
  const rnd = seededRandom(seed);
  const base = [rnd() * 255, rnd() * 255, rnd() * 255];
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    rows[row] = 0; // filter: none
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++) {
        rows[row + 1 + x * 3 + c] = Math.floor((base[c] ?? 0) + (x + y) * 7) % 256;
      }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

interface Kind {
  base: string;
  ext: string;
  make: (seed: number, title: string) => Buffer;
}

const KINDS: readonly Kind[] = [
  {
    base: "report",
    ext: "md",
    make: (seed, title) =>
      Buffer.from(
        `# Report: ${title}\n\nSummary for run seed ${seed}: everything went fine ✅.\n\n` +
          "- naïve baseline: 120 ms\n- tuned: 45 ms 🚀\n\n```ts\nexport const ok = true;\n```\n",
      ),
  },
  { base: "chart", ext: "png", make: (seed) => makePng(seed) },
  {
    base: "data",
    ext: "json",
    make: (seed, title) =>
      Buffer.from(
        `${JSON.stringify(
          {
            title,
            seed,
            items: [
              { name: "café", score: 0.93 },
              { name: "🚀", score: 0.5 },
            ],
          },
          null,
          2,
        )}\n`,
      ),
  },
  {
    base: "table",
    ext: "csv",
    make: (seed) => {
      const rnd = seededRandom(seed);
      const lines = ["id,name,score"];
      for (let i = 1; i <= 8; i++) lines.push(`${i},item-${i},${Math.round(rnd() * 1000) / 10}`);
      return Buffer.from(`${lines.join("\n")}\n`);
    },
  },
  {
    base: "notes",
    ext: "txt",
    make: (_seed, title) =>
      Buffer.from(
        `Notes for "${title}"\n\nNothing surprising; résumé attached. <b>not html</b> & co.\n`,
      ),
  },
];

export interface FileSpec {
  threadId: string;
  /** Folder of the run's outputs, e.g. "output" or "output-2". */
  folder: string;
  seed: number;
  title: string;
  count: number;
  /** Size of the big file, or undefined for none. */
  bigFileBytes: number | undefined;
  /** `bigfiles`: this many files of `mb` MiB each, always inline. */
  huge?: { count: number; mb: number } | undefined;
  /** A web site too (`index.html`, `style.css`, `images/logo.png`), maybe reaching out to `external`. */
  site?: { external?: string } | undefined;
  now: number;
}

export function generateFiles(spec: FileSpec): GeneratedFile[] {
  const files: GeneratedFile[] = [];
  const add = (name: string, content: Buffer, dir = "", alwaysInline = false) => {
    const path = `/workspace/${spec.folder}/${dir}${name}`;
    const type = lookup(name) || "application/octet-stream";
    files.push({
      fileId: `${spec.threadId}:${path}`,
      name,
      path,
      type,
      text: isTextType(type),
      content,
      createdAt: spec.now,
      ...(alwaysInline ? { alwaysInline } : {}),
    });
  };
  for (let i = 0; i < spec.count; i++) {
    const kind = KINDS[i % KINDS.length];
    if (kind === undefined) continue;
    const round = Math.floor(i / KINDS.length);
    const name = round === 0 ? `${kind.base}.${kind.ext}` : `${kind.base}-${round + 1}.${kind.ext}`;
    add(name, kind.make(spec.seed + i, spec.title));
  }
  if (spec.site) {
    add("index.html", Buffer.from(sitePage(spec.title, spec.site.external)));
    add("style.css", Buffer.from(SITE_CSS));
    add("logo.png", makePng(spec.seed, 64, 64), "images/");
  }
  if (spec.bigFileBytes !== undefined) {
    add("dataset-large.csv", bigCsv(spec.bigFileBytes));
  }
  for (let k = 1; k <= (spec.huge?.count ?? 0); k++) {
    add(`clip-${k}.mp4`, hugeFile((spec.huge?.mb ?? 0) * 1024 * 1024, spec.seed + k), "", true);
  }
  return files;
}

/** `bytes` bytes that do not repeat in short runs (a video's worth, for `bigfiles`). */
function hugeFile(bytes: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let x = seed >>> 0 || 1;
  for (let i = 0; i + 4 <= bytes; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, i);
  }
  out.fill(0, bytes - (bytes % 4));
  return out;
}

/** A CSV file of exactly `bytes` bytes. */
function bigCsv(bytes: number): Buffer {
  const out = Buffer.alloc(bytes, 0x20);
  let at = out.write("id,label,value\n");
  for (let i = 1; at < bytes; i++) {
    at += out.write(`${i},row-${i},${(i * 37) % 1000}\n`, at);
  }
  if (bytes > 0) out[bytes - 1] = 0x0a;
  return out;
}

const SITE_CSS = `body { margin: 0; font: 18px/1.5 sans-serif; background: #f4f1ea; color: #222; }
header { display: flex; gap: 16px; align-items: center; padding: 24px 48px; background: #2b5f8a; color: #fff; }
section { min-height: 320px; padding: 24px 48px; border-bottom: 1px solid #ccc; }
`;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A landing page using its stylesheet and image; with `external`, it reaches out every way. */
function sitePage(title: string, external: string | undefined): string {
  const t = escapeHtml(title);
  const sections = [1, 2, 3, 4].map((i) => `<section><h2>Part ${i}</h2><p>${t}</p></section>`);
  const x = external === undefined ? undefined : escapeHtml(external.replace(/\/+$/, ""));
  const head = x
    ? `<link rel="stylesheet" href="${x}/style.css"><script src="${x}/script.js"></script>`
    : "";
  const body = x
    ? `<img src="${x}/pixel.png" alt=""><iframe src="${x}/frame"></iframe>
<script>
fetch("${x}/fetch").catch(() => {});
navigator.sendBeacon("${x}/beacon", "x");
try { new WebSocket("${x.replace(/^http/, "ws")}/ws"); } catch (e) {}
window.open("${x}/popup");
alert("hello");
</script>`
    : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Landing page: ${t}</title>
<link rel="stylesheet" href="style.css">${head}</head>
<body><header><img src="images/logo.png" alt="logo" width="64" height="64"><h1>${t}</h1></header>
${sections.join("\n")}
${body}
</body></html>
`;
}
