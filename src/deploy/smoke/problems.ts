// Every problem counted, the first few of each kind kept and cut short: a page that prints megabytes,
// or prints without end, costs a few kilobytes in the log line, the summary and the comment.

import { clip } from '../../common/format.ts'
import type { Problem } from './watch.ts'

const KEPT_PER_KIND = 5
const TEXT_MAX = 300

export class ProblemLog {
  readonly #kept: Problem[] = []
  readonly #counts = new Map<Problem['kind'], number>()

  push(problem: Problem): void {
    const count = this.count(problem.kind)
    this.#counts.set(problem.kind, count + 1)
    if (count < KEPT_PER_KIND) this.#kept.push(cutProblem(problem))
  }

  get kept(): readonly Problem[] {
    return this.#kept
  }

  /** Of these kinds (of every kind when none is named), kept or not. */
  count(...kinds: Problem['kind'][]): number {
    let sum = 0
    for (const [kind, count] of this.#counts) if (!kinds.length || kinds.includes(kind)) sum += count
    return sum
  }

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
  if ('message' in cut) cut.message = clip(cut.message, TEXT_MAX)
  if ('url' in cut && cut.url !== undefined) cut.url = clip(cut.url, TEXT_MAX)
  if ('failure' in cut && cut.failure !== undefined) cut.failure = clip(cut.failure, TEXT_MAX)
  return cut
}
