/**
 * The action maps it onto @actions/core, the CLI onto the terminal, tests onto an array. A message is
 * one line, handed over as it is: the faces show it inert (visible()). Several lines are several messages.
 */
export interface Logger {
  info(message: string): void
  warning(message: string, annotation?: AnnotationProperties): void
  error(message: string, annotation?: AnnotationProperties): void
  debug(message: string): void
  group<T>(name: string, fn: () => Promise<T>): Promise<T>
}

export interface AnnotationProperties {
  title?: string
  file?: string
}

/** For tests. */
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
