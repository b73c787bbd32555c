// The CLI's logger: plain lines for a CI log or a pipe; on a terminal, a live status line under the
// log with a spinner, the phase's elapsed time and the upload's progress.

import { formatSeconds } from '../common/format.ts'
import type { AnnotationProperties, Logger } from '../common/logger.ts'
import { visible } from '../common/untrusted.ts'

export interface TerminalStream {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

export interface TerminalOptions {
  stream: TerminalStream
  /** A terminal: redraw a status line in place. Default stream.isTTY. */
  interactive?: boolean
  /** ANSI colours. Default: interactive and NO_COLOR unset. */
  color?: boolean
  verbose?: boolean
  /** Milliseconds between redraws of the status line. */
  frameMs?: number
  now?: () => number
}

export interface TerminalLogger extends Logger {
  /** Clears the status line and stops its timer. */
  close(): void
}

/**
 * The periodic line of the upload (progress.ts): `Uploaded files n/N, x/y, rate, ETA`. On a terminal it
 * updates the status line instead of adding a line; the latest one goes into the log when another
 * line follows or the phase ends.
 */
const PROGRESS_LINE = /^Uploaded files \d+\/\d+, /

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

interface Phase {
  name: string
  started: number
  progress: string | undefined
}

export function terminalLogger(options: TerminalOptions): TerminalLogger {
  const { stream } = options
  const interactive = options.interactive ?? stream.isTTY === true
  const color = options.color ?? (interactive && !process.env.NO_COLOR)
  const now = options.now ?? Date.now
  const paint = (code: string, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text)

  let depth = 0
  let phase: Phase | undefined
  let frame = 0
  let timer: NodeJS.Timeout | undefined
  let shown = false
  const clearStatus = () => {
    if (shown) stream.write('\r\x1b[2K')
    shown = false
  }
  // The status line: the phase beside a spinner, redrawn in place.
  const drawStatus = () => {
    if (!interactive || !phase) return
    const status = statusText(phase, now(), stream.columns)
    stream.write(`\r\x1b[2K${paint('36', SPINNER[frame++ % SPINNER.length] ?? '')} ${status}`)
    shown = true
  }
  const stop = () => {
    clearStatus()
    clearInterval(timer)
    timer = undefined
  }
  const write = (text: string) => stream.write(text.replace(/^/gm, '  '.repeat(depth)) + '\n')
  const line = (text: string) => {
    clearStatus()
    // The progress shown in the status line goes into the log before the line that follows it.
    if (phase?.progress) {
      write(phase.progress)
      phase.progress = undefined
    }
    write(text)
    drawStatus()
  }

  // Every message, title and group name is one inert line (visible()): no text, whatever its origin,
  // can move the cursor, colour the terminal, or start a workflow command in a CI log that reads this.
  return {
    info(message) {
      const text = visible(message)
      if (interactive && phase && PROGRESS_LINE.test(text)) {
        phase.progress = text
        drawStatus()
      } else line(text)
    },
    warning: (message, annotation) => line(`${paint('33', 'warning:')} ${titled(message, annotation)}`),
    error: (message, annotation) => line(`${paint('31', 'error:')} ${titled(message, annotation)}`),
    debug(message) {
      if (options.verbose) line(paint('2', `debug: ${visible(message)}`))
    },
    async group(rawName, fn) {
      const name = visible(rawName)
      line(paint('1', `> ${name}`))
      const outer = phase
      const current: Phase = { name, started: now(), progress: undefined }
      phase = current
      depth++
      if (interactive && !timer) {
        timer = setInterval(drawStatus, options.frameMs ?? 100)
        timer.unref()
      }
      drawStatus()
      try {
        return await fn()
      } finally {
        phase = outer
        if (current.progress) line(current.progress)
        depth--
        if (!phase) stop()
      }
    },
    close: stop,
  }
}

/** The phase, its seconds and progress, cut to the terminal's width so that it never wraps. */
function statusText(phase: Phase, now: number, columns: number | undefined): string {
  const detail = phase.progress ? ` · ${phase.progress.replace(/^Uploaded /, '')}` : ''
  const status = `${phase.name} ${formatSeconds(now - phase.started)}${detail}`
  return columns && status.length > columns - 3 ? status.slice(0, columns - 4) + '…' : status
}

function titled(message: string, annotation: AnnotationProperties | undefined): string {
  return `${annotation?.title ? `${visible(annotation.title)}: ` : ''}${visible(message)}`
}
