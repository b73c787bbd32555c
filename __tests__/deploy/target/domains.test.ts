// Honest URLs: url is the namespace's own host under the CDN domain the service names (or
// cdn-domain), and a custom domain is reported with its state: active, or pending with the CNAME record
// it needs. The pending cap and a domain under the CDN domain are said plainly; the latter is refused
// before anything is created.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ServiceClient } from '../../../src/api/client.ts'
import { OPS } from '../../../src/api/operations.ts'
import { createAgent } from '../../../src/api/http.ts'
import { ServiceError, UsageError } from '../../../src/api/errors.ts'
import { retryPolicy } from '../../../src/common/retry.ts'
import type { GetNamespaceResponse } from '../../../src/api/types.ts'
import { renderComment, nextState } from '../../../src/actions/preview.ts'
import type { Cell, Report } from '../../../src/common/report.ts'
import { memoryLogger } from '../../../src/common/logger.ts'
import { resolveCdnDomain } from '../../../src/deploy/target/cdn-domain.ts'
import { deploy, deployFailure, type DeployResult } from '../../../src/deploy/pipeline.ts'
import { provision } from '../../../src/deploy/target/provision.ts'
import { deployOutputs, deployReport } from '../../../src/deploy/account.ts'
import { DEFAULT_SEED, startEmulator, type Emulator } from '../../../src/emulator/index.ts'
import { deployResult } from '../../support/deploy-result.ts'
import { hasTarget, readInputs, type TargetedInputs } from '../../../src/inputs/deploy.ts'
import { virtualTime } from '../../support/virtual-time.ts'
import { getter, siteFiles, tempDir, writeTree } from '../../support/helpers.ts'

/** The first table's rows, each cell as text (code in backticks). */
function keyValueRows(report: Report): string[][] {
  const block = report.blocks.find((b) => b.kind === 'table')
  assert.ok(block?.kind === 'table')
  const inline = (cell: Cell): string =>
    typeof cell === 'string' ? cell : 'code' in cell ? `\`${cell.code}\`` : cell.map(inline).join('')
  return block.table.rows.map((row) => row.map(inline))
}

const GAME = DEFAULT_SEED.games[0]!.id
const VERSION = '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53'
const agent = createAgent()
after(() => agent.close())

/** A client that sees every domain pending, as the real service shows a domain until its DNS points. */
class PendingClient extends ServiceClient {
  override async getNamespace(gameId: string, namespaceId: string): Promise<GetNamespaceResponse> {
    const answer = await super.getNamespace(gameId, namespaceId)
    for (const entry of answer.namespace.config.cdn.domains) {
      entry.verification_status = 'pending'
      entry.verification_method = { http: { cname_record: 'demo-game--pending-1.localhost' } }
    }
    return answer
  }
}

/** A client whose domain adds meet one of the service's caps (default the team's pending host names). */
class CappedClient extends ServiceClient {
  code = 'CLOUD_TOO_MANY_PENDING_HOSTNAMES_FOR_GROUP'
  override async addNamespaceDomain(): Promise<void> {
    throw new ServiceError({
      operation: 'games.namespaces.addNamespaceDomain',
      status: 400,
      body: { code: this.code, message: 'Too many pending hostnames.', ray_id: 'ray-cap' },
    })
  }
}

describe('domains and the CDN domain', () => {
  let emulator: Emulator
  let site: string
  // The publish delay is the service's, on virtual time that the deploy's checks of its url move.
  const time = virtualTime()
  before(async () => {
    emulator = await startEmulator({ rateLimit: false, timer: time.timer })
    site = await tempDir()
    await writeTree(site, siteFiles(3))
  })
  after(() => emulator.close())

  const options = (logger = memoryLogger()) => ({
    baseUrl: emulator.url,
    token: 'gamehost-demo-token',
    dispatcher: agent,
    logger,
    retry: retryPolicy({ sleep: async () => {} }),
  })
  const values = (extra: Record<string, string>) => ({
    'api-url': emulator.url,
    token: 'gamehost-demo-token',
    'game-id': GAME,
    ...extra,
  })
  const targeted = (extra: Record<string, string>): TargetedInputs => {
    const read = readInputs(getter(values(extra)))
    assert.ok(hasTarget(read))
    return read
  }

  test('a pending domain is reported with the CNAME record it needs', async () => {
    const logger = memoryLogger()
    const { provisioned } = await provision(
      new PendingClient(options(logger)),
      targeted({ namespace: 'pending-1', 'version-id': VERSION, domain: 'pending-1.example.com' }),
      logger,
    )
    assert.deepEqual(provisioned.domainStatus, {
      status: 'pending',
      cnameRecord: 'demo-game--pending-1.localhost',
    })
    assert.ok(
      logger.lines.includes(
        `Added domain pending-1.example.com to namespace ${provisioned.namespaceId} (pending)`,
      ),
    )
  })

  test('the pending cap names domain and what to do', async () => {
    const error = await provision(
      new CappedClient(options()),
      targeted({ namespace: 'capped-1', 'version-id': VERSION, domain: 'capped-1.example.com' }),
      memoryLogger(),
    ).catch((e: unknown) => e)
    assert.ok(error instanceof UsageError, String(error))
    assert.match(
      error.message,
      /^domain 'capped-1\.example\.com' cannot be added: the team already holds .*10 pending/,
    )
    assert.match(error.message, /CNAME record/)
    assert.match(error.message, /leave domain empty/)
    assert.match(error.message, /max-previews of 10 or fewer \(fewer when other domains wait too\)/)
    assert.match(error.message, /Too many pending hostnames\. \(ray id ray-cap\)/)
  })

  test("a namespace's cap of 10 domains names domain and what to do", async () => {
    const client = new CappedClient(options())
    client.code = 'CDN_TOO_MANY_DOMAINS'
    const error = await provision(
      client,
      targeted({ namespace: 'capped-2', 'version-id': VERSION, domain: 'capped-2.example.com' }),
      memoryLogger(),
    ).catch((e: unknown) => e)
    assert.ok(error instanceof UsageError, String(error))
    assert.match(
      error.message,
      /^domain 'capped-2\.example\.com' cannot be added: namespace [0-9a-f-]+ holds the most custom domains the service allows a namespace \(10\)\. Remove one it no longer needs, or give this domain to another namespace/,
    )
  })

  test('a domain under the CDN domain the service names is refused before anything is created', async () => {
    const namespaces = emulator.namespaces(GAME).length
    const sites = emulator.sites(GAME).length
    const error = await deploy(
      readInputs(getter(values({ path: site, namespace: 'under-cdn', domain: 'play.localhost' }))),
      {
        logger: memoryLogger(),
        tempDir: await tempDir(),
        retry: { sleep: async () => {} },
      },
    ).catch((e: unknown) => deployFailure(e).error)
    assert.ok(error instanceof UsageError, String(error))
    assert.match(error.message, /^domain 'play\.localhost' is under the service's CDN domain localhost/)
    assert.equal(emulator.namespaces(GAME).length, namespaces)
    assert.equal(emulator.sites(GAME).length, sites)
  })

  test("with cdn-domain empty, url is the namespace host under the service's CDN domain", async () => {
    const logger = memoryLogger()
    const result = await deploy(readInputs(getter(values({ path: site, namespace: 'from-service' }))), {
      logger,
      tempDir: await tempDir(),
      retry: { sleep: async () => {} },
      sleep: time.sleep,
      clock: time.clock,
    })
    const port = new URL(emulator.url).port
    assert.equal(result.published?.url, `http://demo-game--from-service.localhost:${port}/`)
    assert.ok(
      logger.lines.includes(
        `Namespaces are served under http://localhost:${port} (the service's CDN domain, from GET /cloud/bootstrap)`,
      ),
    )
    // An explicit cdn-domain still wins.
    const given = await deploy(
      readInputs(
        getter(
          values({
            path: site,
            namespace: 'from-service',
            'cdn-domain': 'games.example',
            'skip-unchanged': 'false',
            // No host of games.example exists here: this checks the url, not what it serves.
            verify: 'false',
          }),
        ),
      ),
      {
        logger: memoryLogger(),
        tempDir: await tempDir(),
        retry: { sleep: async () => {} },
      },
    )
    assert.equal(given.published?.url, 'https://demo-game--from-service.games.example/')
  })
})

describe('the CDN domain from the service', () => {
  test('a service that names none: a warning, and no url rather than a wrong one', async () => {
    const logger = memoryLogger()
    const cdn = await resolveCdnDomain(
      { bootstrap: async () => ({ domains: {} }) },
      undefined,
      'https://api.example.com',
      logger,
    )
    assert.equal(cdn, undefined)
    assert.ok(
      logger.lines.some((l) => /^warning: The service names no CDN domain .*Set cdn-domain/.test(l)),
      logger.lines.join('\n'),
    )
    assert.equal(
      await resolveCdnDomain(
        { bootstrap: async () => ({}) },
        undefined,
        'https://api.example.com',
        memoryLogger(),
      ),
      undefined,
    )
  })

  test('the hosted service: a domain served over https; a local one: its scheme and port', async () => {
    const bootstrap = async () => ({ domains: { cdn: 'rivet.game' } })
    assert.equal(
      await resolveCdnDomain({ bootstrap }, undefined, 'https://api.rivet.gg', memoryLogger()),
      'rivet.game',
    )
    assert.equal(
      await resolveCdnDomain({ bootstrap }, undefined, 'http://127.0.0.1:8787', memoryLogger()),
      'http://rivet.game:8787',
    )
    // cdn-domain wins, and the service is not asked.
    const never = async () => assert.fail('bootstrap is not called')
    assert.equal(
      await resolveCdnDomain(
        { bootstrap: never },
        'games.example',
        'https://api.example.com',
        memoryLogger(),
      ),
      'games.example',
    )
  })

  test("the bootstrap answer's shape is checked: domains.cdn must be a host name", () => {
    const check = OPS.bootstrap.answer
    assert.equal(check({ domains: { cdn: 'rivet.game' } }, ''), undefined)
    assert.equal(check({ cluster: 'enterprise' }, ''), undefined)
    assert.equal(check({ domains: { cdn: null } }, ''), undefined)
    assert.match(check({ domains: { cdn: 'rivet.game/x' } }, '') ?? '', /domains\.cdn is .*not a host name/)
    assert.match(check({ domains: { cdn: 'evil.example\n::warning::x' } }, '') ?? '', /domains\.cdn/)
  })
})

describe('a pending domain in the summary and the comment', () => {
  const published = (status: string): DeployResult['published'] => ({
    versionId: VERSION,
    versionName: 'v',
    replacedVersionId: undefined,
    created: true,
    url: 'https://game--pr-1.rivet.game/',
    domain: {
      name: 'pr-1.example.com',
      status,
      url: 'https://pr-1.example.com/',
      cnameTarget: 'game--pr-1.rivet.game',
    },
  })
  const result = (status: string) =>
    deployResult({
      siteName: 's',
      provisioned: {
        nameId: 'pr-1',
        namespaceId: VERSION,
        domain: 'pr-1.example.com',
        domainStatus: { status, cnameRecord: 'game--pr-1.rivet.game' },
      },
      published: published(status),
      plannedParts: 0,
      durationMs: 0,
    })

  test('summary: pending shows the host first and the CNAME record to create; active shows the domain first', () => {
    const pending = keyValueRows(deployReport(result('pending')))
    assert.deepEqual(pending.slice(0, 2), [
      ['URL', 'https://game--pr-1.rivet.game/'],
      [
        'Domain',
        'pr-1.example.com pending: create a CNAME record `pr-1.example.com` → `game--pr-1.rivet.game`',
      ],
    ])
    const active = keyValueRows(deployReport(result('active')))
    assert.deepEqual(active.slice(0, 2), [
      ['Domain', 'https://pr-1.example.com/ (active)'],
      ['URL', 'https://game--pr-1.rivet.game/'],
    ])
    assert.equal(deployOutputs(result('pending'))['domain-status'], 'pending')
    assert.equal(deployOutputs(result('pending'))['url'], 'https://game--pr-1.rivet.game/')
  })

  test('comment: pending links the host and says the CNAME record; active links the domain first', () => {
    const state = (status: string) =>
      nextState('k', undefined, {
        namespaceId: VERSION,
        domain: 'pr-1.example.com',
        published: {
          versionId: VERSION,
          url: 'https://game--pr-1.rivet.game/',
          domainStatus: status,
          cnameTarget: 'game--pr-1.rivet.game',
        },
      })
    const pending = renderComment({ title: 't', status: 's', state: state('pending') })
    assert.match(
      pending,
      /\| Preview \| \[https:\/\/game--pr-1\.rivet\.game\/\]\(https:\/\/game--pr-1\.rivet\.game\/\) \|/,
    )
    assert.match(
      pending,
      /\| Domain \| `pr-1\.example\.com` pending: create a CNAME record `pr-1\.example\.com` → `game--pr-1\.rivet\.game` \|/,
    )
    assert.doesNotMatch(pending, /\(https:\/\/pr-1\.example\.com\/\)/, 'a pending domain is not linked')
    const active = renderComment({ title: 't', status: 's', state: state('active') })
    const rows = active.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| ---'))
    assert.equal(rows[0], '| Preview | [pr-1.example.com](https://pr-1.example.com/) |')
    assert.equal(rows[1], '| Host | [https://game--pr-1.rivet.game/](https://game--pr-1.rivet.game/) |')
  })
})
