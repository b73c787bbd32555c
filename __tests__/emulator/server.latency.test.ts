import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startEmulator } from '../../src/emulator/index.ts'

test('latencyMs delays every answer like a network round trip', async () => {
  const emulator = await startEmulator({ latencyMs: 60 })
  try {
    const started = performance.now()
    const res = await fetch(`${emulator.url}/cloud/games/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86/avatars`, {
      headers: { authorization: 'Bearer gamehost-demo-token' },
    })
    await res.arrayBuffer()
    assert.equal(res.status, 200)
    assert.ok(performance.now() - started >= 55, 'the answer waited for the latency')
  } finally {
    await emulator.close()
  }
})

test('latencyMs must be a whole number of ms', async () => {
  await assert.rejects(startEmulator({ latencyMs: -1 }), /latencyMs must be a whole number/)
})

test('putLatencyMs delays the answer of each accepted store PUT', async () => {
  const emulator = await startEmulator({ putLatencyMs: 80, multipartThreshold: Number.MAX_SAFE_INTEGER })
  try {
    const created = await fetch(
      `${emulator.url}/cloud/games/4b9e2c71-5d3a-4f68-a0c2-7e1d9b3f5a86/cdn/sites`,
      {
        method: 'POST',
        headers: { authorization: 'Bearer gamehost-demo-token', 'content-type': 'application/json' },
        body: JSON.stringify({ display_name: 'Web Client', files: [{ path: 'a.txt', content_length: 5 }] }),
      },
    )
    const site = (await created.json()) as { presigned_requests: Array<{ url: string }> }
    assert.equal(created.status, 200)
    const putStarted = performance.now()
    const put = await fetch(site.presigned_requests[0]!.url, {
      method: 'PUT',
      headers: { 'content-length': '5' },
      body: 'hello',
    })
    await put.arrayBuffer()
    assert.equal(put.status, 200)
    assert.ok(performance.now() - putStarted >= 75, 'the PUT answer waited for the latency')
  } finally {
    await emulator.close()
  }
})

test('putLatencyMs must be a whole number of ms', async () => {
  await assert.rejects(startEmulator({ putLatencyMs: 1.5 }), /putLatencyMs must be a whole number/)
})
