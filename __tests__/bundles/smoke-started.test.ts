// Started means started (issue 46), in the machine's Chrome or Chromium: a page whose main thread
// freezes, whose renderer is killed, whose browser stops (SIGSTOP) mid-watch or while it loads, fails
// the check within seconds, the problems seen before kept, and every process the check started ended.
// Served from 127.0.0.1; without a browser, skipped. A `browser` that is not a Chrome (a shell script)
// is refused before the deploy creates anything, against the emulator.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout } from 'node:timers/promises'
import type { Server } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { UsageError } from '../../src/api/errors.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { deploy } from '../../src/deploy/pipeline.ts'
import { findBrowser } from '../../src/deploy/smoke/browser.ts'
import { chooseBrowser } from '../../src/deploy/smoke/index.ts'
import type { Emulator } from '../../src/emulator/index.ts'
import { readInputs } from '../../src/inputs/deploy.ts'
import { GAME, TOKEN } from '../support/actions.ts'
import { startTestEmulator } from '../support/emulator.ts'
import type { Seen } from '../../src/deploy/smoke/watch.ts'
import { getter, tempDir, writeTree } from '../support/helpers.ts'
import { CANVAS, servePages, smokeOf } from '../support/smoke-page.ts'

const browser = findBrowser({ env: process.env, platform: process.platform })
const noBrowser = 'missing' in browser ? browser.missing : undefined
const browserPath = (browser as { path: string }).path

/** A guard, not the measure: the check ends on what happened, seconds after the watch. */
const BOUND = { timeout: 60_000 }

/** This process's descendants (Linux's /proc): pid and command line. */
function descendants(): Array<{ pid: number; cmdline: string }> {
  const parents = new Map<number, number>()
  const lines = new Map<number, string>()
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
      lines.set(pid, readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '))
    } catch {
      // ended meanwhile
    }
  }
  const ours = (pid: number): boolean => {
    for (let p = parents.get(pid); p; p = parents.get(p)) if (p === process.pid) return true
    return false
  }
  return [...lines].filter(([pid]) => ours(pid)).map(([pid, cmdline]) => ({ pid, cmdline }))
}

const kept = (seen: Seen | undefined, message: string) =>
  seen?.problems.kept.some((p) => 'message' in p && p.message === message)

/** Whether a process runs (a zombie, ended but not yet reaped by its new parent, does not). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

/** Whether it ends within a moment: SIGKILL is sent to a group at once, and taken by each in turn. */
async function ended(pid: number): Promise<boolean> {
  for (let i = 0; i < 40 && running(pid); i++) await setTimeout(50)
  return !running(pid)
}

const browsers = () => descendants().filter((p) => p.cmdline.includes('--proxy-server=socks5'))

describe('started means started', { skip: noBrowser }, () => {
  let server: Server
  let origin: string
  before(async () => {
    ;({ server, origin } = await servePages({
      '/frozen/': `<!DOCTYPE html><body>${CANVAS}<script>
console.error('before the freeze')
addEventListener('load', () => requestAnimationFrame(() => setTimeout(() => { while (true) {} }, 50)))
</script></body>`,
      '/crash/': `<!DOCTYPE html><body>${CANVAS}<script>
console.error('before the crash')
addEventListener('load', () => fetch('/kill-renderer'))
</script></body>`,
      '/leaves-blank/': `<!DOCTYPE html><body>${CANVAS}<script>
addEventListener('load', () => setTimeout(() => { location.href = 'about:blank' }, 50))
</script></body>`,
      '/leaves-origin/': `<!DOCTYPE html><body>${CANVAS}<script>
addEventListener('load', () => setTimeout(() => { location.href = 'http://other.invalid/lobby.html' }, 50))
</script></body>`,
      '/stays/': `<!DOCTYPE html><body>${CANVAS}<script>
addEventListener('load', () => setTimeout(() => { history.pushState({}, '', '/stays/level-2'); location.hash = 'menu' }, 50))
</script></body>`,
      '/blank/': '<!DOCTYPE html><body style="margin: 0; background: #fff"></body>',
      '/loading-bar/': `<!DOCTYPE html><body style="margin: 0; background: #fff">
<canvas width="320" height="200" style="display: block"></canvas>
<div style="position: absolute; left: 60px; top: 90px; width: 200px; height: 20px; background: #333">
<div style="width: 40%; height: 100%; background: #ff8800"></div></div>
</body>`,
      '/stalled/': `<!DOCTYPE html><body>${CANVAS}<script>
fetch('/Build/game.data').then((answer) => answer.arrayBuffer())
</script></body>`,
      '/Build/game.data': (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '65536' })
        response.write(Buffer.alloc(1000))
      },
      '/stops/': `<!DOCTYPE html><body>${CANVAS}<script>
addEventListener('load', () => fetch('/stop-browser'))
</script></body>`,
      '/stops-loading/': `<!DOCTYPE html><body>${CANVAS}<img src="/stop-browser-group"></body>`,
      // Every process of the browser stopped before the page's load event could reach the driver.
      '/stop-browser-group': (_request, response) => {
        for (const { pid } of browsers()) process.kill(-pid, 'SIGSTOP')
        response.end('stopped')
      },
      '/stop-browser': (_request, response) => {
        response.end('stopped')
        for (const { pid } of browsers()) process.kill(pid, 'SIGSTOP')
      },
      '/kill-renderer': (_request, response) => {
        for (const { pid, cmdline } of descendants())
          if (cmdline.includes('--type=renderer')) process.kill(pid, 'SIGKILL')
        response.end('killed')
      },
    }))
  })
  after(() => {
    server?.closeAllConnections()
    server?.close()
  })

  test(
    'a main thread frozen after drawing: failed, said to have frozen, the problems before kept',
    BOUND,
    async () => {
      const { smoke, lines, seen } = await smokeOf(`${origin}/frozen/`, browserPath)
      assert.equal(smoke.status, 'failed', lines.join('\n'))
      assert.match(smoke.line, /first: the page's main thread froze/)
      assert.ok(kept(seen, 'before the freeze'), 'the problems seen before are kept')
      assert.deepEqual(browsers(), [], 'no browser process is left')
    },
  )

  test(
    'a renderer killed mid-watch: failed, said to have crashed, the problems before kept',
    { ...BOUND, skip: process.platform !== 'linux' && 'kills the renderer through /proc' },
    async () => {
      const { smoke, lines, seen } = await smokeOf(`${origin}/crash/`, browserPath, '5')
      assert.equal(smoke.status, 'failed', lines.join('\n'))
      assert.match(smoke.line, /first: the page's renderer crashed/)
      assert.ok(kept(seen, 'before the crash'), 'the problems seen before are kept')
      assert.deepEqual(browsers(), [], 'no browser process is left')
    },
  )

  test(
    'a browser that stops answering (stopped mid-watch): failed, said so, its processes ended',
    { ...BOUND, skip: process.platform !== 'linux' && 'stops the browser through /proc' },
    async () => {
      const { smoke, lines } = await smokeOf(`${origin}/stops/`, browserPath)
      assert.equal(smoke.status, 'failed', lines.join('\n'))
      assert.match(smoke.line, /first: the browser stopped answering/)
      assert.deepEqual(browsers(), [], 'no browser process is left')
    },
  )

  test(
    'a browser that stops answering while the page loads: failed in seconds, not at the load timeout, its processes ended',
    { ...BOUND, skip: process.platform !== 'linux' && 'stops the browser through /proc' },
    async () => {
      const { smoke, lines } = await smokeOf(`${origin}/stops-loading/`, browserPath)
      assert.equal(smoke.status, 'failed', lines.join('\n'))
      assert.match(
        smoke.line,
        /first: the browser stopped answering: it did not answer for 5 s while the page was watched/,
      )
      assert.deepEqual(browsers(), [], 'no browser process is left')
    },
  )

  test(
    'a request not ended when the watch ends: failed, its URL, the bytes arrived and for how long named',
    BOUND,
    async () => {
      const { smoke, lines } = await smokeOf(`${origin}/stalled/`, browserPath)
      assert.equal(smoke.status, 'failed', lines.join('\n'))
      assert.match(
        smoke.line,
        new RegExp(
          `first: ${origin}/Build/game\\.data had not ended when the watch ended: 1000 B of 64\\.0 KiB arrived in \\d+\\.\\d s`,
        ),
      )
    },
  )

  test(
    'a page that leaves for about:blank, or another origin: failed, where it went named',
    BOUND,
    async () => {
      const blank = await smokeOf(`${origin}/leaves-blank/`, browserPath)
      assert.equal(blank.smoke.status, 'failed', blank.lines.join('\n'))
      assert.match(blank.smoke.line, /first: the page left the deployed URL for about:blank$/)
      const other = await smokeOf(`${origin}/leaves-origin/`, browserPath)
      assert.equal(other.smoke.status, 'failed', other.lines.join('\n'))
      assert.match(
        other.smoke.line,
        /the page left the deployed URL for http:\/\/other\.invalid\/lobby\.html/,
      )
    },
  )

  test('a pushState and a hash within the deployed origin: still there, passed', BOUND, async () => {
    const { smoke, lines } = await smokeOf(`${origin}/stays/`, browserPath)
    assert.equal(smoke.status, 'passed', lines.join('\n'))
  })

  test('a page that painted nothing: failed, one flat colour said', BOUND, async () => {
    const { smoke, lines } = await smokeOf(`${origin}/blank/`, browserPath)
    assert.equal(smoke.status, 'failed', lines.join('\n'))
    assert.match(smoke.line, /the page shows one flat colour \(#ffffff\)/)
  })

  test(
    'a canvas never drawn under a loading bar: failed, what shows of the canvas is one flat colour',
    BOUND,
    async () => {
      const { smoke, lines } = await smokeOf(`${origin}/loading-bar/`, browserPath)
      assert.equal(smoke.status, 'failed', lines.join('\n'))
      assert.match(smoke.line, /the canvas \(320×200\) shows one flat colour \(#ffffff\) where it is seen/)
    },
  )
})

describe('a browser that is not a Chrome', { skip: process.platform === 'win32' && 'shell scripts' }, () => {
  let emulator: Emulator
  let site: string
  before(async () => {
    emulator = await startTestEmulator({ rateLimit: false })
    site = await tempDir()
    await writeTree(site, { 'index.html': '<title>a game</title>' })
  })
  after(() => emulator?.close())

  const deployWith = (browser: string) =>
    deploy(
      readInputs(
        getter({
          'api-url': emulator.url,
          token: TOKEN,
          'game-id': GAME,
          path: site,
          namespace: 'pr-1',
          'smoke-test': 'true',
          browser,
        }),
      ),
      { logger: memoryLogger(), tempDir: site },
    )

  test(
    'a shell script that does not answer: the deploy refused before anything is created, what it is named, nothing of it left running',
    BOUND,
    async () => {
      const dir = await tempDir()
      const script = path.join(dir, 'not-chrome.sh')
      const pidFile = path.join(dir, 'child.pid')
      await writeFile(script, `#!/bin/sh\nsleep 300 &\necho $! > ${pidFile}\nwait\n`, { mode: 0o755 })
      await assert.rejects(deployWith(script), (error: unknown) => {
        assert.ok(error instanceof UsageError, String(error))
        assert.equal(
          error.message,
          `browser is ${script}, which is not Chrome or Chromium: it did not answer --version within 5 s. Set browser to a Chrome or Chromium's path, or smoke-test: false`,
        )
        return true
      })
      assert.deepEqual(emulator.requests, [], 'no call was made to the service')
      const child = Number(await readFile(pidFile, 'utf8'))
      assert.ok(await ended(child), `its child ${child} is left running`)
    },
  )

  test('a script that says it is another browser: refused at once, what it said quoted', BOUND, async () => {
    const script = path.join(await tempDir(), 'firefox')
    await writeFile(script, '#!/bin/sh\necho "Mozilla Firefox 128.0"\n', { mode: 0o755 })
    await assert.rejects(
      deployWith(script),
      new RegExp(
        `^UsageError: browser is ${script}, which is not Chrome or Chromium: it answers --version with "Mozilla Firefox 128\\.0"\\.`,
      ),
    )
    assert.deepEqual(emulator.requests, [])
  })

  test('one named by CHROME_BIN: refused, the variable named', BOUND, async () => {
    const script = path.join(await tempDir(), 'chrome')
    await writeFile(script, '#!/bin/sh\necho "not a browser"\n', { mode: 0o755 })
    await assert.rejects(
      chooseBrowser({ smoke: { enabled: true, browser: undefined, watchMs: 1000 } }, { CHROME_BIN: script }),
      new RegExp(
        `^UsageError: CHROME_BIN names ${script}, which is not Chrome or Chromium: it answers --version with "not a browser"`,
      ),
    )
  })
})
