// The CLI's logger: plain lines for a CI log or a pipe; on a terminal, a live status line under the log.

import { formatSeconds } from '../common/format.ts'
import type { AnnotationProperties, Logger } from '../common/logger.ts'
import { visible } from '../common/untrusted.ts'

export interface TerminalStream {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

interface TerminalOptions {
  stream: TerminalStream
  /** Default stream.isTTY. */
  interactive?: boolean
  /** Default: interactive and NO_COLOR unset. */
  color?: boolean
  verbose?: boolean
  frameMs?: number
  now?: () => number
}

export interface TerminalLogger extends Logger {
  close(): void
}

/** The upload's periodic line (progress.ts): on a terminal it updates the status line instead. */
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
    if (phase?.progress) {
      write(phase.progress)
      phase.progress = undefined
    }
    write(text)
    drawStatus()
  }

  // Every text passes visible(): none can move the cursor, colour the terminal, or start a workflow
  // command in a CI log that reads this.
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

/** Cut to the terminal's width so that it never wraps. */
function statusText(phase: Phase, now: number, columns: number | undefined): string {
  const detail = phase.progress ? ` · ${phase.progress.replace(/^Uploaded /, '')}` : ''
  const status = `${phase.name} ${formatSeconds(now - phase.started)}${detail}`
  return columns && status.length > columns - 3 ? status.slice(0, columns - 4) + '…' : status
}

function titled(message: string, annotation: AnnotationProperties | undefined): string {
  return `${annotation?.title ? `${visible(annotation.title)}: ` : ''}${visible(message)}`
}
