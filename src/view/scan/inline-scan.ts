/** Two helpers of mrkdwn.ts's inline converter that read a line a run at a time: its code spans,
 * and its text between markup kept as slices (a line of 600 empty code spans converts in half the
 * time of a map of run lengths and a string built a span at a time). */

/** The text of a line between its pieces of markup: text that goes on where the last slice
 * ended extends it (a line of empty code spans is one slice, not hundreds). */
export class LineText {
  readonly #s: string;
  #text = "";
  #from = 0;
  #to = 0;

  constructor(s: string) {
    this.#s = s;
  }

  add(start: number, end: number): void {
    if (start !== this.#to) {
      this.#text += this.#s.slice(this.#from, this.#to);
      this.#from = start;
    }
    this.#to = end;
  }

  /** The text so far, then cleared. */
  take(): string {
    const text = this.#text + this.#s.slice(this.#from, this.#to);
    this.#text = "";
    this.#from = this.#to = 0;
    return text;
  }
}

/** Code spans of a line: at the start of each run of backticks, its length (`runs`) and where the
 * next run as long starts (`closes`, 0 for none); nothing when the line has no two runs. */
export function codeSpans(s: string): { runs?: Int32Array; closes?: Int32Array } {
  const first = s.indexOf("`");
  if (first < 0) return {};
  let end = first + 1;
  while (s.charCodeAt(end) === 96) end++;
  if (s.indexOf("`", end) < 0) return {};
  const runs = new Int32Array(s.length); // at a run's start, its length
  const closes = new Int32Array(s.length); // at a run's start, the next run as long (or 0)
  // For each length, where the last run that long started, plus one (0: none yet).
  const lastOfLength = new Int32Array(s.length + 1);
  for (let i = first; i >= 0;) {
    let j = i + 1;
    while (s.charCodeAt(j) === 96) j++;
    runs[i] = j - i;
    const before = (lastOfLength[j - i] ?? 0) - 1;
    if (before >= 0) closes[before] = i;
    lastOfLength[j - i] = i + 1;
    // The next run: looked at in the next few characters, searched for beyond them.
    const near = Math.min(j + NEAR, s.length);
    let k = j + 1;
    while (k < near && s.charCodeAt(k) !== 96) k++;
    i = k < near ? k : s.indexOf("`", k);
  }
  return { runs, closes };
}

/** How far the next run of backticks is looked for a character at a time (a search costs as much). */
const NEAR = 8;
