// "Did you mean": the known name nearest to a mistyped one, as git, gh and npm suggest.

/** Edits (insert, delete, replace, swap two neighbours) from one word to the other. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/** Case and the separator do not count: `Site_Name` is `site-name`. */
const normal = (word: string) => word.toLowerCase().replace(/_/g, '-')

/** Near enough: at most a third of its letters (and at least one) to change; none when two are equally near. */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const typed = normal(word)
  let best: string | undefined
  let bestDistance = Infinity
  let tie = false
  for (const name of known) {
    const d = distance(typed, normal(name))
    if (d < bestDistance) [best, bestDistance, tie] = [name, d, false]
    else if (d === bestDistance) tie = true
  }
  const allowed = Math.max(1, Math.floor(typed.length / 3))
  return best !== undefined && bestDistance <= allowed && !tie ? best : undefined
}

export function didYouMean(word: string, known: readonly string[], show = (name: string) => name): string {
  const found = nearest(word, known)
  return found === undefined ? '' : ` Did you mean ${show(found)}?`
}
