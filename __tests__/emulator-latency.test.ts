import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startEmulator } from '../src/emulator/index.ts'

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
