// Running the actions of this repository through their committed bundles, the way the runner does.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Server } from '../../src/api/types.ts'
import { DEFAULT_SEED, type Seed } from '../../src/emulator/index.ts'
import { actionDefaults, runAction, type ActionRun } from '../../scripts/run-action.ts'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const TOKEN = 'gamehost-demo-token'
export const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
export const NAMESPACE = DEFAULT_SEED.games[0]!.namespaces![0]!.id
export const RUNNING_LOBBY = DEFAULT_SEED.games[0]!.lobbies!.find((l) => !l.status.stopped)!
export const CRASHED_LOBBY = DEFAULT_SEED.games[0]!.lobbies!.find((l) => l.status.stopped?.failed)!

export type ActionName = 'servers' | 'lobby-logs' | 'avatars' | 'validate' | 'publish' | 'sweep'

const defaults = new Map<ActionName, Promise<Record<string, string>>>()

/** Runs dist/<name>/index.js with every input of <name>/action.yml: its defaults, then `inputs`. */
export async function runNewAction(name: ActionName, inputs: Record<string, string>): Promise<ActionRun> {
  if (!defaults.has(name)) defaults.set(name, actionDefaults(path.join(root, name, 'action.yml')))
  return runAction({
    entry: path.join(root, 'dist', name, 'index.js'),
    defaults: await defaults.get(name)!,
    cwd: root,
    inputs,
  })
}

/** The lines of a step's log that are workflow commands of a kind (`error`, `warning`), debug left out. */
export function commands(run: ActionRun, kind: string): string[] {
  return run.stdout.split('\n').filter((line) => line.startsWith(`::${kind}`))
}

/**
 * The demo seed plus 'staging' environment of the demo game: `count` servers, newest first by index,
 * tagged region eu (even) or us (odd) and pool a/b/c, every third one destroyed.
 */
export function stagingSeed(count: number): { seed: Seed; servers: Server[] } {
  const template = DEFAULT_SEED.games[0]!.environments![0]!.servers[0]!
  const servers: Server[] = Array.from({ length: count }, (_, i) => {
    const created = Date.parse('2025-06-01T00:00:00Z') - i * 60_000
    const server: Server = {
      ...template,
      id: `5e7a0000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      environment: '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92',
      created_at: created,
      started_at: created + 5_000,
      tags: { region: i % 2 === 0 ? 'eu' : 'us', pool: 'abc'[i % 3]! },
    }
    if (i % 3 === 2) server.destroyed_at = created + 30_000
    else delete server.destroyed_at
    return server
  })
  const [demo, ...others] = DEFAULT_SEED.games
  const seed: Seed = {
    ...DEFAULT_SEED,
    games: [
      {
        ...demo!,
        environments: [
          ...(demo!.environments ?? []),
          { id: '7a2e5c8f-1b4d-4e9a-a3c6-8d1f4b7e0c92', servers },
        ],
      },
      ...others,
    ],
  }
  return { seed, servers }
}

/** The names under `inputs:` or `outputs:` of an action.yml, in order. */
export async function actionNames(actionYml: string, section: 'inputs' | 'outputs'): Promise<string[]> {
  const names: string[] = []
  let current = ''
  for (const line of (await readFile(actionYml, 'utf8')).split('\n')) {
    const top = /^(\w[\w-]*):/.exec(line)
    if (top) current = top[1]!
    const name = /^ {2}([\w-]+):/.exec(line)
    if (current === section && name) names.push(name[1]!)
  }
  return names
}
