/** Where an item sits in its Heap, -1 when in none. */
export interface Indexed {
  heapIndex: number;
}

/** A binary min-heap whose items know their index: push, pop, remove and re-order in O(log n). */
export class Heap<T extends Indexed> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  /** A copy of the items, in no particular order. */
  items(): T[] {
    return [...this.#items];
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    item.heapIndex = this.#items.length;
    this.#items.push(item);
    this.#up(item);
  }

  pop(): T | undefined {
    const top = this.#items[0];
    if (top) this.remove(top);
    return top;
  }

  /** False when `item` is not in this heap. */
  remove(item: T): boolean {
    const i = item.heapIndex;
    if (this.#items[i] !== item) return false;
    item.heapIndex = -1;
    const last = this.#items.pop();
    if (last && last !== item) {
      this.#items[i] = last;
      last.heapIndex = i;
      this.#up(last);
      this.#down(last);
    }
    return true;
  }

  /** Restores the order after `item`'s key changed. */
  update(item: T): void {
    if (this.#items[item.heapIndex] !== item) return;
    this.#up(item);
    this.#down(item);
  }

  /** Empties the heap; returns its items, in no particular order. */
  clear(): T[] {
    const items = this.#items.splice(0);
    for (const item of items) item.heapIndex = -1;
    return items;
  }

  #up(item: T): void {
    let i = item.heapIndex;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = this.#items[p];
      if (!parent || !this.#before(item, parent)) break;
      this.#items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    this.#items[i] = item;
    item.heapIndex = i;
  }

  #down(item: T): void {
    const n = this.#items.length;
    let i = item.heapIndex;
    for (;;) {
      let c = 2 * i + 1;
      let child = this.#items[c];
      if (!child) break;
      const right = c + 1 < n ? this.#items[c + 1] : undefined;
      if (right && this.#before(right, child)) {
        c += 1;
        child = right;
      }
      if (!this.#before(child, item)) break;
      this.#items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    this.#items[i] = item;
    item.heapIndex = i;
  }
}
