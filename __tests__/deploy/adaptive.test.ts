import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AdaptiveConcurrency, SLOW_START } from '../../src/deploy/adaptive.ts'

describe('AdaptiveConcurrency', () => {
  it('starts at the configured concurrency when it is SLOW_START or lower, and never rises above it', () => {
    assert.equal(SLOW_START, 16)
    const limits: number[] = []
    const a = new AdaptiveConcurrency(16, (l) => limits.push(l))
    assert.equal(a.current, 16)
    for (let i = 0; i < 100; i++) a.succeeded()
    assert.equal(a.current, 16)
    assert.deepEqual(limits, [])
  })

  it('starts at SLOW_START below a higher ceiling, one more per success (doubling each round) up to it', () => {
    const limits: number[] = []
    const a = new AdaptiveConcurrency(64, (l) => limits.push(l))
    assert.equal(a.current, 16)
    for (let i = 0; i < 16; i++) a.succeeded()
    assert.equal(a.current, 32)
    for (let i = 0; i < 32; i++) a.succeeded()
    assert.equal(a.current, 64)
    for (let i = 0; i < 100; i++) a.succeeded()
    assert.equal(a.current, 64)
    assert.deepEqual(
      limits,
      Array.from({ length: 48 }, (_, i) => 17 + i),
    )
  })

  it('the first overload ends the slow start: from there it grows by one per round', () => {
    const a = new AdaptiveConcurrency(192)
    for (let i = 0; i < 24; i++) a.succeeded()
    assert.equal(a.current, 40)
    assert.equal(a.overloaded(a.started()), true)
    assert.equal(a.current, 20)
    for (let i = 0; i < 19; i++) a.succeeded()
    assert.equal(a.current, 20)
    a.succeeded()
    assert.equal(a.current, 21)
  })

  it('halves on overload, once per storm: failures of PUTs started before the decrease are ignored', () => {
    const limits: number[] = []
    const a = new AdaptiveConcurrency(64, (l) => limits.push(l), 64)
    const before = Array.from({ length: 10 }, () => a.started())
    assert.equal(a.overloaded(before[0]!), true)
    for (const epoch of before.slice(1)) assert.equal(a.overloaded(epoch), false)
    assert.equal(a.current, 32)
    assert.equal(a.overloaded(a.started()), true)
    assert.equal(a.current, 16)
    assert.deepEqual(limits, [32, 16])
  })

  it('never goes below 1', () => {
    const a = new AdaptiveConcurrency(3)
    a.overloaded(a.started())
    assert.equal(a.current, 1)
    assert.equal(a.overloaded(a.started()), false)
    assert.equal(a.current, 1)
  })

  it('grows by one each time as many PUTs as allowed in flight have succeeded, back to the ceiling', () => {
    const a = new AdaptiveConcurrency(8)
    a.overloaded(a.started())
    assert.equal(a.current, 4)
    for (let i = 0; i < 3; i++) a.succeeded()
    assert.equal(a.current, 4)
    a.succeeded()
    assert.equal(a.current, 5)
    for (let i = 0; i < 5; i++) a.succeeded()
    assert.equal(a.current, 6)
    for (let i = 0; i < 100; i++) a.succeeded()
    assert.equal(a.current, 8)
  })

  it('an overload restarts the count of successes', () => {
    const a = new AdaptiveConcurrency(8)
    a.overloaded(a.started())
    for (let i = 0; i < 3; i++) a.succeeded()
    a.overloaded(a.started())
    assert.equal(a.current, 2)
    a.succeeded()
    assert.equal(a.current, 2)
    a.succeeded()
    assert.equal(a.current, 3)
  })
})
