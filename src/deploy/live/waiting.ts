// What a seen-live wait says while it lasts (poll.ts says when): what the host answers now and how long
// is left. When it answers with other bytes than the build's, its record names the build it serves.

import { describeProgress, type Progress } from '../../common/poll.ts'
import type { Logger } from '../../common/logger.ts'
import { readServedRecord, type HostOptions } from '../collect/record.ts'
import type { Mismatch } from './verify.ts'

interface WaitingOptions {
  url: string
  /** "this build", "another build than before". */
  build: string
  host: HostOptions
  servedBefore?: string
  logger: Pick<Logger, 'info'>
}

interface WaitingSayer {
  say: (progress: Progress<Mismatch>) => void
  /** The wait ended: a record still being read is abandoned, and its line not said. */
  end: () => void
}

export function waitingSayer(options: WaitingOptions): WaitingSayer {
  const { url, build, logger } = options
  const ended = new AbortController()
  const host = { ...options.host, signal: AbortSignal.any([options.host.signal, ended.signal]) }
  const sayNow = (progress: Progress<Mismatch>, served = '') => {
    const line = describeProgress(progress, (m) => `${m.urlPath} ${m.reason}${served}`)
    if (!ended.signal.aborted) logger.info(`Still waiting for ${url} to serve ${build}, ${line}`)
  }
  const say = (progress: Progress<Mismatch>) => {
    if (!progress.last?.otherBytes) return sayNow(progress)
    void readServedRecord(url, host).then(
      (served) => {
        if ('absent' in served)
          return sayNow(progress, `, and it serves no record of a build (${served.absent})`)
        const { digest, commit } = served.record
        const of = commit ? ` (commit ${commit.slice(0, 7)})` : ''
        const before = digest === options.servedBefore ? ', the one it served before' : ''
        sayNow(progress, `, as it serves build ${shortDigest(digest)}${of}${before}`)
      },
      () => sayNow(progress),
    )
  }
  return { say, end: () => ended.abort() }
}

/** "sha256:9e6178ff42a8…". */
const shortDigest = (digest: string) => (digest.length > 19 ? `${digest.slice(0, 19)}…` : digest)
