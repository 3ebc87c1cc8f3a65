/** Types of check-node.js (plain JavaScript so that an old Node can run it). */
export function requiredVersion(range: string | undefined): [number, number] | undefined;
export function nodeVersionProblem(
  version: string,
  range: string | undefined,
  projectNode?: boolean,
): string | undefined;
