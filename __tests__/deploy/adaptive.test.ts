import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { AdaptiveConcurrency, FLOOR, MIN_ROUND, SLOW_START } from '../../src/deploy/adaptive.ts'
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from '../../src/inputs/constants.ts'

type Outcome = 'ok' | 'refused'

/**
 * PUTs started at the current epoch that then finish in this order. No clock: a round ends by count,
 * as many finished PUTs as the limit when it began (MIN_ROUND at least).
 */
function finish(a: AdaptiveConcurrency, outcomes: Outcome[], kind = '503'): void {
  const epochs = outcomes.map(() => a.started())
  outcomes.forEach((o, i) => (o === 'ok' ? a.succeeded(epochs[i]!) : a.refused(epochs[i]!, kind)))
}

/** One whole round, `refused` of its PUTs refused (spread evenly). */
function round(a: AdaptiveConcurrency, refused: number): void {
  finish(a, mix(a.roundSize, refused))
}

/** `n` outcomes of which `refused` are refusals, spread evenly (a PRNG-free stand-in for a random share). */
function mix(n: number, refused: number): Outcome[] {
  return Array.from({ length: n }, (_, i) =>
    Math.floor(((i + 1) * refused) / n) > Math.floor((i * refused) / n) ? 'refused' : 'ok',
  )
}

function recorder() {
  const limits: number[] = []
  const notes: string[] = []
  const onChange = (limit: number, note: string | undefined) => {
    limits.push(limit)
    if (note) notes.push(note)
  }
  return { limits, notes, onChange }
}

describe('AdaptiveConcurrency', () => {
  describe('the starting concurrency', () => {
    it('is SLOW_START, the default concurrency: a default upload starts with all it may have in flight', () => {
      assert.equal(SLOW_START, DEFAULT_CONCURRENCY)
      const { limits, onChange } = recorder()
      const a = new AdaptiveConcurrency(DEFAULT_CONCURRENCY, onChange)
      assert.equal(a.current, DEFAULT_CONCURRENCY)
      for (let i = 0; i < 5; i++) round(a, 0)
      assert.equal(a.current, DEFAULT_CONCURRENCY)
      assert.deepEqual(limits, [])
    })

    it('below a higher ceiling, one more per PUT stored (doubling each round) up to it', () => {
      const { limits, onChange } = recorder()
      const a = new AdaptiveConcurrency(MAX_CONCURRENCY, onChange)
      assert.equal(a.current, SLOW_START)
      round(a, 0)
      assert.equal(a.current, MAX_CONCURRENCY)
      assert.deepEqual(
        limits,
        Array.from({ length: MAX_CONCURRENCY - SLOW_START }, (_, i) => SLOW_START + 1 + i),
      )
      const b = new AdaptiveConcurrency(64, undefined, 16)
      round(b, 0)
      assert.equal(b.current, 32)
      round(b, 0)
      assert.equal(b.current, 64)
    })

    it('is the configured concurrency when that is lower, and never rises above it', () => {
      for (const max of [3, 64]) {
        const { limits, onChange } = recorder()
        const a = new AdaptiveConcurrency(max, onChange)
        assert.equal(a.current, max)
        for (let i = 0; i < 5; i++) round(a, 0)
        assert.equal(a.current, max)
        assert.deepEqual(limits, [])
      }
    })

    it('can be given, within the floor and the ceiling', () => {
      assert.equal(new AdaptiveConcurrency(192, undefined, 128).current, 128)
      assert.equal(new AdaptiveConcurrency(192, undefined, 1000).current, 192)
      assert.equal(new AdaptiveConcurrency(192, undefined, 1).current, FLOOR)
    })
  })

  describe('cuts at most once per round trip', () => {
    it('halves once for a round full of refusals, however many PUTs of it were refused', () => {
      const { limits, notes, onChange } = recorder()
      const a = new AdaptiveConcurrency(64, onChange, 64)
      assert.equal(a.roundSize, 64)
      round(a, 40)
      assert.equal(a.current, 32)
      assert.deepEqual(limits, [32])
      assert.deepEqual(notes, ['The store signals overload (503): 32 uploads at a time'])
    })

    it('decides only when the round ends: refusals in the middle of a round change nothing yet', () => {
      const a = new AdaptiveConcurrency(64, undefined, 64)
      const epochs = Array.from({ length: 64 }, () => a.started())
      for (const epoch of epochs.slice(0, 63)) a.refused(epoch, '503')
      assert.equal(a.current, 64)
      a.refused(epochs[63]!, '503')
      assert.equal(a.current, 32)
    })

    it('a round is MIN_ROUND PUTs at least, however few are allowed in flight', () => {
      const a = new AdaptiveConcurrency(8, undefined, 8)
      assert.equal(a.roundSize, MIN_ROUND)
      finish(a, mix(MIN_ROUND - 1, MIN_ROUND - 1))
      assert.equal(a.current, 8)
      finish(a, ['refused'])
      assert.equal(a.current, 4)
    })

    it('does not count PUTs started before a cut: they were sent at the old limit', () => {
      const { limits, onChange } = recorder()
      const a = new AdaptiveConcurrency(64, onChange, 64)
      const before = Array.from({ length: 200 }, () => a.started())
      for (const epoch of before.slice(0, 64)) a.refused(epoch, '503')
      assert.equal(a.current, 32)
      // The other 136 PUTs of the old limit are refused too: no further cut.
      for (const epoch of before.slice(64)) a.refused(epoch, '503')
      assert.equal(a.current, 32)
      assert.deepEqual(limits, [32])
      // The round of the new limit is refused again: the next halving, one round later.
      round(a, 32)
      assert.equal(a.current, 16)
      assert.deepEqual(limits, [32, 16])
    })

    it('a sure sign of overload (overloaded) halves at once, but not twice in a round', () => {
      const a = new AdaptiveConcurrency(64, undefined, 64)
      const epochs = Array.from({ length: 10 }, () => a.started())
      assert.equal(a.overloaded(epochs[0]!), true)
      assert.equal(a.current, 32)
      // Started before it: ignored; started after it, in the same round: ignored too.
      assert.equal(a.overloaded(epochs[1]!), false)
      assert.equal(a.overloaded(a.started()), false)
      assert.equal(a.current, 32)
      round(a, 0) // the round ends (and the limit grows by an eighth)
      assert.equal(a.current, 36)
      assert.equal(a.overloaded(a.started()), true)
      assert.equal(a.current, 18)
    })
  })

  describe('never below the floor', () => {
    it('FLOOR PUTs in flight at least, or the ceiling when it is lower', () => {
      assert.equal(FLOOR, 4)
      const { limits, onChange } = recorder()
      const a = new AdaptiveConcurrency(64, onChange, 64)
      for (let i = 0; i < 20; i++) {
        a.overloaded(a.started())
        round(a, 0)
      }
      assert.equal(Math.min(...limits), FLOOR)
      const atFloor = new AdaptiveConcurrency(64, undefined, FLOOR)
      assert.equal(atFloor.overloaded(atFloor.started()), false)
      assert.equal(atFloor.current, FLOOR)
      // A store that refuses everything: each cut is kept (the share stored did not fall), and at
      // the floor it gets no more.
      const b = new AdaptiveConcurrency(64, undefined, 64)
      for (let i = 0; i < 20; i++) round(b, b.roundSize)
      assert.equal(b.current, FLOOR)
      const c = new AdaptiveConcurrency(3)
      assert.equal(c.floor, 3)
      round(c, c.roundSize)
      assert.equal(c.overloaded(c.started()), false)
      assert.equal(c.current, 3)
    })

    it('at the floor, what the store refuses is taken as its own: the limit grows again', () => {
      const a = new AdaptiveConcurrency(64, undefined, 8)
      round(a, 16)
      assert.equal(a.current, 4)
      round(a, 4) // the test round: the share stored rose from 0 to 3/4, the cut is kept
      assert.equal(a.current, 4)
      assert.equal(a.tolerated, 0.25)
      for (let i = 0; i < 4; i++) round(a, 4)
      assert.equal(a.current, 8)
    })
  })

  describe('refusals that do not come from our load', () => {
    it('a cut that does not raise the share stored is undone, and the share refused tolerated', () => {
      const { limits, notes, onChange } = recorder()
      const a = new AdaptiveConcurrency(192, onChange, 192)
      round(a, 48) // 25% refused
      assert.equal(a.current, 96)
      round(a, 24) // 25% at half the load: not overload
      assert.equal(a.current, 192)
      assert.equal(a.tolerated, 0.25)
      assert.deepEqual(limits, [96, 192])
      assert.deepEqual(notes, [
        'The store signals overload (503): 96 uploads at a time',
        'Not overload: the store refused 25% of uploads at 96 at a time, 25% at 192; 192 uploads at a time',
      ])
      // From then on a quarter refused changes nothing, round after round: no line in the log.
      for (let i = 0; i < 50; i++) round(a, 48 + (i % 3) * 5)
      assert.equal(a.current, 192)
      assert.equal(notes.length, 2)
    })

    it('keeps growing through the slow start when the refusals are not overload', () => {
      const { limits, onChange } = recorder()
      const a = new AdaptiveConcurrency(192, onChange, 16)
      // Refusals 4, 8, 12 and 16: one more per PUT stored until the second, then a cut of that.
      round(a, 4)
      assert.deepEqual(limits, [17, 18, 19, 20, 21, 22, 11])
      round(a, 4)
      assert.equal(a.current, 22)
      round(a, 5)
      assert.ok(a.current > 33, `${a.current}`)
      while (a.current < 192) {
        const before = a.current
        round(a, Math.floor(a.roundSize / 4))
        assert.ok(a.current > before)
      }
    })

    it('overload on top of refusals it tolerates is still cut', () => {
      const a = new AdaptiveConcurrency(192, undefined, 192)
      round(a, 48)
      round(a, 24)
      assert.equal(a.current, 192)
      round(a, 120) // 62%: the store is overloaded now
      assert.equal(a.current, 96)
      round(a, 24) // back to its quarter: the cut is kept
      assert.equal(a.current, 96 + 12)
    })

    it('the tolerated share falls again once the store refuses less', () => {
      const a = new AdaptiveConcurrency(192, undefined, 192)
      round(a, 96)
      round(a, 48)
      assert.equal(a.tolerated, 0.5)
      for (let i = 0; i < 60; i++) round(a, 0)
      assert.ok(a.tolerated < 0.01, `${a.tolerated}`)
      round(a, 40) // a fifth refused is news again
      assert.equal(a.current, 96)
    })
  })

  describe('growth back after faults', () => {
    it('after a kept cut, an eighth more each clean round, back to the ceiling, said once', () => {
      const { notes, onChange } = recorder()
      const a = new AdaptiveConcurrency(192, onChange, 192)
      round(a, 100)
      assert.equal(a.current, 96)
      round(a, 0) // the cut helped: kept, and the first clean round
      assert.equal(a.current, 108)
      let rounds = 1
      while (a.current < 192) {
        const before: number = a.current
        round(a, 0)
        assert.equal(a.current, Math.min(192, before + Math.floor(before / 8)))
        rounds++
      }
      assert.equal(rounds, 6)
      assert.deepEqual(notes, [
        'The store signals overload (503): 96 uploads at a time',
        '192 uploads at a time again',
      ])
    })

    it('from the floor too, by one at least', () => {
      const a = new AdaptiveConcurrency(64, undefined, 8)
      round(a, 16)
      round(a, 0)
      assert.equal(a.current, 5)
      round(a, 0)
      assert.equal(a.current, 6)
      while (a.current < 64) round(a, 0)
      assert.equal(a.current, 64)
    })

    it('a refused round during the growth halves again, once', () => {
      const a = new AdaptiveConcurrency(64, undefined, 64)
      round(a, 64)
      round(a, 0)
      assert.equal(a.current, 36)
      round(a, 30)
      assert.equal(a.current, 18)
    })
  })

  it('names each kind of refusal of the round in its line', () => {
    const { notes, onChange } = recorder()
    const a = new AdaptiveConcurrency(16, onChange, 16)
    const epochs = Array.from({ length: 16 }, () => a.started())
    epochs.forEach((epoch, i) =>
      i < 8 ? a.refused(epoch, i % 2 ? '503' : 'connection lost') : a.succeeded(epoch),
    )
    assert.deepEqual(notes, ['The store signals overload (connection lost, 503): 8 uploads at a time'])
  })
})
