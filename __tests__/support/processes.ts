// The processes a test started, and what the kernel says of them (Linux's /proc): for a test that
// checks what a browser it launched can read of its own environment.

import { readdir, readFile } from 'node:fs/promises'

export interface ProcessSeen {
  pid: number
  /** Its command line, arguments joined by spaces. */
  command: string
  /** Its environment, as the kernel holds it: `NAME=value` strings. */
  environ: string[]
}

async function parentOf(pid: number): Promise<number | undefined> {
  // The stat line is `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined)
  if (!stat) return undefined
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
}

/** Every living descendant of `root` (by default this process), with its command line and environment. */
export async function descendants(root = process.pid): Promise<ProcessSeen[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number)
  const parents = new Map<number, number | undefined>()
  await Promise.all(pids.map(async (pid) => parents.set(pid, await parentOf(pid))))
  const ours = new Set([root])
  for (let grew = true; grew;) {
    grew = false
    for (const [pid, parent] of parents)
      if (parent !== undefined && ours.has(parent) && !ours.has(pid)) grew = Boolean(ours.add(pid))
  }
  ours.delete(root)
  const seen: ProcessSeen[] = []
  for (const pid of ours) {
    const [cmdline, environ] = await Promise.all([
      readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/environ`, 'utf8').catch(() => undefined),
    ])
    if (environ === undefined) continue
    seen.push({ pid, command: cmdline.split('\0').join(' '), environ: environ.split('\0').filter(Boolean) })
  }
  return seen
}
