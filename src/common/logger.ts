/**
 * The small logging surface the core needs. The action maps it onto @actions/core, the CLI onto the
 * terminal, tests onto an array: the core never imports @actions/*.
 *
 * A message is one line, handed over as it is, text from outside included: the faces show it inert
 * (untrusted.ts visible(): a line break in it shows as `\n`, a workflow command or an escape sequence
 * as text). Text of several lines is logged as several messages.
 */
export interface Logger {
  info(message: string): void
  warning(message: string, annotation?: AnnotationProperties): void
  error(message: string, annotation?: AnnotationProperties): void
  debug(message: string): void
  /** Runs `fn` inside a collapsible group of log lines. */
  group<T>(name: string, fn: () => Promise<T>): Promise<T>
}

export interface AnnotationProperties {
  title?: string
  file?: string
}

/** A logger that keeps every line, for tests. */
export function memoryLogger(lines: string[] = []): Logger & { lines: string[] } {
  return {
    lines,
    info: (m) => void lines.push(m),
    warning: (m, a) => void lines.push(`warning: ${a?.title ? `${a.title}: ` : ''}${m}`),
    error: (m, a) => void lines.push(`error: ${a?.title ? `${a.title}: ` : ''}${m}`),
    debug: (m) => void lines.push(`debug: ${m}`),
    group: async (name, fn) => {
      lines.push(`group: ${name}`)
      try {
        return await fn()
      } finally {
        lines.push(`endgroup: ${name}`)
      }
    },
  }
}
