// Deploys against an emulator that injects the faults of the real internet: every byte must arrive intact.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ServiceClient } from '../../src/api/client.ts'
import { createAgent } from '../../src/api/http.ts'
import { ServiceError } from '../../src/api/errors.ts'
import { retryPolicy } from '../../src/common/retry.ts'
import { deploy, deployFailure } from '../../src/deploy/pipeline.ts'
import { type Emulator, type EmulatorOptions } from '../../src/emulator/index.ts'
import { startTestEmulator } from '../support/emulator.ts'
import { readInputs, type DeployInputs } from '../../src/inputs/deploy.ts'
import { memoryLogger } from '../../src/common/logger.ts'
import { PartUploadError } from '../../src/deploy/upload/put.ts'
import { getter, siteFiles, tempDir, writeTree } from '../support/helpers.ts'

const GAME = '4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86'
const KiB = 1024

async function chaos(faults: EmulatorOptions['faults']): Promise<Emulator> {
  const emulator = await startTestEmulator({ multipartThreshold: 256 * KiB, partSize: 256 * KiB, faults })
  return emulator
}

async function site(): Promise<{ root: string; written: Map<string, Buffer> }> {
  const root = await tempDir()
  const written = await writeTree(root, {
    ...siteFiles(60, { name: 'build/game.data', size: 1024 * KiB + 13 }),
    'build/music.ogg': 700 * KiB,
  })
  return { root, written }
}

/**
 * The inputs of a deploy of `root`. `stallMs` cuts stalled PUTs sooner than the input's whole seconds
 * allow: only where stalls are injected, since on a busy machine a PUT that is merely slow is cut too.
 */
function inputsFor(
  emulator: Emulator,
  root: string,
  extra: Record<string, string> = {},
  stallMs?: number,
): DeployInputs {
  const inputs = readInputs(
    getter({
      'api-url': emulator.url,
      'cdn-domain': emulator.url.replace('127.0.0.1', 'localhost'),
      token: 'gamehost-demo-token',
      'game-id': GAME,
      path: root,
      ...extra,
    }),
  )
  if (stallMs === undefined) return inputs
  return { ...inputs, transfer: { ...inputs.transfer, requestTimeoutMs: stallMs } }
}

async function assertIntact(emulator: Emulator, siteId: string, written: Map<string, Buffer>): Promise<void> {
  assert.equal(emulator.site(siteId)?.completed, true)
  for (const [file, bytes] of written) {
    assert.ok((await emulator.readUploadedFile(siteId, file)).equals(bytes), `${file} reads back identical`)
  }
}

describe('deploys through injected faults', () => {
  test('503s, resets mid-body, stalls, a 429 on site creation and a 503 on namespace creation', async () => {
    const emulator = await chaos({
      seed: 7,
      putErrorRate: 0.15,
      putResetRate: 0.1,
      putStallCount: 3,
      script: {
        'POST /cloud/games/:game_id/cdn/sites': ['429'],
        'POST /cloud/games/:game_id/namespaces': ['503'],
      },
    })
    try {
      const { root, written } = await site()
      const waits: number[] = []
      const logger = memoryLogger()
      const result = await deploy(
        // At a 25% failure rate a part fails 6 times running once in 4,000; 10 retries make that 1 in 4 million.
        inputsFor(
          emulator,
          root,
          {
            namespace: 'chaos',
            'version-id': '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
            retries: '10',
            concurrency: '6',
          },
          // The injected stalls are cut after 300 ms.
          300,
        ),
        { logger, tempDir: root, retry: { sleep: async (ms) => void waits.push(ms) } },
      )
      assert.ok(result.siteId)
      await assertIntact(emulator, result.siteId, written)
      assert.equal(
        emulator.namespaces(GAME).filter((n) => n.nameId === 'chaos').length,
        1,
        'exactly one namespace',
      )

      const f = emulator.faults
      assert.ok(f.putErrors > 0 && f.putResets > 0, JSON.stringify(f))
      assert.equal(f.putStalls, 3)
      assert.equal(f.api429s, 1)
      assert.equal(f.apiErrors, 1)
      assert.ok(
        result.upload!.retries >= f.putErrors + f.putResets + f.putStalls,
        JSON.stringify({ f, r: result.upload }),
      )
      assert.ok(
        waits.some((ms) => ms >= 900 && ms <= 1300),
        `the 429's retry-after was honoured: ${waits.join(', ')}`,
      )
      assert.ok(
        logger.lines.some((l) => /^games\.cdn\.createGameCdnSite: 429 API_RATE_LIMIT; retry 1 of 10/.test(l)),
      )
      assert.ok(logger.lines.some((l) => /^games\.namespaces\.createGameNamespace: 503 /.test(l)))
      assert.ok(
        logger.lines.some((l) => /no answer within 0\.3 s \(UND_ERR_HEADERS_TIMEOUT\)/.test(l)),
        `stalls were cut at request-timeout: ${logger.lines.join('\n')}`,
      )
      assert.ok(!logger.lines.join('\n').includes('signature='), 'presigned URLs are never logged')
    } finally {
      await emulator.close()
    }
  })

  test('bytes corrupted in transit are caught by the ETag check and sent again', async () => {
    const emulator = await chaos({ seed: 3, putWrongEtagRate: 0.3 })
    try {
      const { root, written } = await site()
      const logger = memoryLogger()
      const result = await deploy(inputsFor(emulator, root, { retries: '10' }), {
        logger,
        tempDir: root,
        retry: { sleep: async () => {} },
      })
      assert.ok(emulator.faults.putWrongEtags > 0)
      await assertIntact(emulator, result.siteId!, written)
      assert.ok(logger.lines.some((l) => /is not the MD5 of the bytes sent/.test(l)))
    } finally {
      await emulator.close()
    }
  })

  test('retries stop after `retries`, naming the part, the file and the last answer; nothing is completed', async () => {
    const emulator = await chaos({ putErrorRate: 1 })
    try {
      const { root } = await site()
      const { error } = deployFailure(
        await deploy(
          inputsFor(emulator, root, { retries: '2', files: 'build/game.data', 'require-index': 'false' }),
          {
            logger: memoryLogger(),
            tempDir: root,
            retry: { sleep: async () => {} },
          },
        ).catch((e: unknown) => e),
      )
      assert.ok(error instanceof PartUploadError)
      assert.match(
        error.message,
        /^Upload of build\/game\.data part [1-5]\/5: the store answered 503 SlowDown.* \(gave up after 3 attempts\)$/,
      )
      assert.ok(emulator.sites(GAME).every((s) => !s.completed))
      assert.ok(!emulator.requests.some((r) => r.path.endsWith('/complete')))
    } finally {
      await emulator.close()
    }
  })
})

describe('API calls under faults', () => {
  const agent = createAgent()
  const client = (emulator: Emulator) =>
    new ServiceClient({
      baseUrl: emulator.url,
      token: 'gamehost-demo-token',
      dispatcher: agent,
      logger: memoryLogger(),
      retry: retryPolicy({ sleep: async () => {} }),
    })

  test('reads are retried through resets and 503s', async () => {
    const emulator = await chaos({ script: { 'GET /cloud/games/:game_id/avatars': ['reset', '503', '503'] } })
    try {
      const { custom_avatars } = await client(emulator).listCustomAvatars(GAME)
      assert.ok(custom_avatars.length > 0)
      assert.equal(emulator.faults.apiResets, 1)
      assert.equal(emulator.faults.apiErrors, 2)
    } finally {
      await emulator.close()
    }
  })

  test('a create call whose connection broke after sending is not retried: it cannot create twice', async () => {
    const emulator = await chaos({ script: { 'POST /cloud/games/:game_id/namespaces': ['reset'] } })
    try {
      const error = await client(emulator)
        .createNamespace(GAME, {
          name_id: 'once',
          display_name: 'Once',
          version_id: '8c5a1f3e-2b7d-4c9a-b6e0-1f4d7a2c9e53',
        })
        .catch((e: unknown) => e)
      assert.ok(!(error instanceof ServiceError) && error instanceof Error, String(error))
      assert.equal(emulator.requests.filter((r) => r.path.endsWith('/namespaces')).length, 1)
    } finally {
      await emulator.close()
    }
  })

  test('a service that stays unavailable fails with its last answer after the retries', async () => {
    const emulator = await chaos({ apiErrorRate: 1 })
    try {
      const error = await client(emulator)
        .listCustomAvatars(GAME)
        .catch((e: unknown) => e)
      assert.ok(error instanceof ServiceError)
      assert.equal(error.status, 503)
      assert.match(error.message, /\(ray id [0-9a-f-]{36}\).*\(gave up after 9 attempts\)$/)
    } finally {
      await emulator.close()
      await agent.close()
    }
  })
})
