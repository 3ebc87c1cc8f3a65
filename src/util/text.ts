/**
 * Strings that hold no more memory than their characters: in V8 a slice keeps its whole parent
 * alive, and a `+=` string is a tree of its pieces (about 32 bytes each).
 */

/** A string of its own: its parent can go. */
export const owned = (text: string): string => (text.length < 13 ? text : ` ${text}`.slice(1));

/** A text grown piece by piece, flattened whenever its pieces would weigh a quarter of it. */
export class GrowingText {
  #text: string;
  #pieces = 0;

  constructor(text = "") {
    this.#text = text;
  }

  get text(): string {
    return this.#text;
  }

  get length(): number {
    return this.#text.length;
  }

  append(piece: string): void {
    if (piece === "") return;
    this.#text += piece;
    if (++this.#pieces > 1024 && this.#pieces * 128 > this.#text.length) {
      // Reading a tree of pieces (a slice) makes V8 flatten it into one string.
      this.#text = ` ${this.#text}`.slice(1);
      this.#pieces = 0;
    }
  }
}
