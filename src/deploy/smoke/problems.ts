// What the page did wrong, as a bounded account: every problem counted, the first few of each kind kept,
// each cut to a few hundred characters. A page that prints one error of megabytes, or prints without
// end while it is watched, costs a few kilobytes here: the log line, the summary and the comment that
// quote it stay small.

import { clip } from '../../common/format.ts'
import type { Problem } from './watch.ts'

export type ProblemKind = Problem['kind']

/** Of each kind, the first this many are kept; the others are only counted. */
export const PROBLEMS_KEPT_PER_KIND = 5

/** A message or URL kept is cut to this many characters, with an ellipsis and its full length. */
export const PROBLEM_TEXT_MAX = 300

export class ProblemLog {
  readonly #kept: Problem[] = []
  readonly #counts = new Map<ProblemKind, number>()

  /** Counts the problem, and keeps it (cut) while its kind has fewer than PROBLEMS_KEPT_PER_KIND kept. */
  push(problem: Problem): void {
    const count = this.count(problem.kind)
    this.#counts.set(problem.kind, count + 1)
    if (count < PROBLEMS_KEPT_PER_KIND) this.#kept.push(cutProblem(problem))
  }

  /** The problems kept, in the order they happened. */
  get kept(): readonly Problem[] {
    return this.#kept
  }

  /** How many problems of these kinds (of every kind when none is named) happened, kept or not. */
  count(...kinds: ProblemKind[]): number {
    let sum = 0
    for (const [kind, count] of this.#counts) if (!kinds.length || kinds.includes(kind)) sum += count
    return sum
  }

  /** How many happened that are not kept. */
  get leftOut(): number {
    return this.count() - this.#kept.length
  }

  static of(problems: readonly Problem[]): ProblemLog {
    const log = new ProblemLog()
    for (const problem of problems) log.push(problem)
    return log
  }
}

function cutProblem(problem: Problem): Problem {
  const cut = { ...problem }
  if ('message' in cut) cut.message = clip(cut.message, PROBLEM_TEXT_MAX)
  if ('url' in cut && cut.url !== undefined) cut.url = clip(cut.url, PROBLEM_TEXT_MAX)
  if ('failure' in cut && cut.failure !== undefined) cut.failure = clip(cut.failure, PROBLEM_TEXT_MAX)
  return cut
}
