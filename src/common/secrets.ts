// The one redactor of a run. The faces register every secret as they read their inputs; visible()
// calls redact() before any escaping, and each face's writers (streams, job summary, outputs, bodies
// sent to GitHub) call it again on what they write, so that nothing can bypass it.

const REDACTED = '***'

/** Shorter values are not secrets worth redacting: they would blank ordinary words of the log. */
const MIN_SECRET_LENGTH = 4
/** A base64 run shorter than this is too short to stand for the secret inside a longer encoding. */
const MIN_BASE64_CORE = 8

/** The forms a secret travels in: base64 (inside a longer encoding too), URL, Markdown, JSON, HTML, workflow command. */
export function secretForms(secret: string): string[] {
  const forms = [
    secret,
    ...base64Forms(secret),
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    new URLSearchParams({ s: secret }).toString().slice(2),
    secret.replace(/[!-/:-@[-`{-~]/g, '\\$&'),
    secret.replace(/[!-/:-@[-`{-~]/g, (char) =>
      char === '@' || char === '#' ? `\\${char}\u2060` : `\\${char}`,
    ),
    secret.replace(/\|/g, '\\|'),
    JSON.stringify(secret).slice(1, -1),
    JSON.stringify(secret).slice(1, -1).replace(/\//g, '\\/'),
    htmlEscaped(secret, '&#39;'),
    htmlEscaped(secret, '&#x27;'),
  ]
  // Each as a workflow command carries it too: the runner shows the message and properties unescaped.
  const commandForms = forms.flatMap((form) => {
    const message = form.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
    return [message, message.replace(/:/g, '%3A').replace(/,/g, '%2C')]
  })
  return [...new Set([...forms, ...commandForms])].filter((form) => form.length >= MIN_SECRET_LENGTH)
}

/**
 * The secret in base64 on its own, and the three runs of base64 that stand for it inside any longer
 * encoding: the bytes before it shift it by 0, 1 or 2 bytes within base64's groups of three, and the
 * groups that hold only its bytes encode the same way whatever surrounds them.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret)
  const forms = [bytes.toString('base64'), bytes.toString('base64url')]
  for (const start of [0, 1, 2]) {
    const whole = Math.floor((bytes.length - start) / 3) * 3
    if (whole <= 0) continue
    const core = bytes.subarray(start, start + whole)
    forms.push(core.toString('base64'), core.toString('base64url'))
  }
  return forms.filter((form) => form.length >= MIN_BASE64_CORE)
}

function htmlEscaped(secret: string, apostrophe: string): string {
  return secret
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, apostrophe)
}

export class Secrets {
  readonly #forms = new Set<string>()
  #pattern: RegExp | undefined

  add(secret: string | undefined): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH) return
    for (const form of secretForms(secret)) this.#forms.add(form)
    // The longest form first: a secret inside another (the password in user:password) leaves no part shown.
    const alternatives = [...this.#forms].sort((a, b) => b.length - a.length).map(escapeRegExp)
    this.#pattern = new RegExp(alternatives.join('|'), 'g')
  }

  redact(text: string): string {
    return this.#pattern ? text.replace(this.#pattern, REDACTED) : text
  }

  /** Arrays and plain objects copied with their strings redacted, anything else kept. */
  redactValue<T>(value: T): T {
    if (typeof value === 'string') return this.redact(value) as T
    if (Array.isArray(value)) return value.map((item: unknown) => this.redactValue(item)) as T
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, this.redactValue(item)]),
      ) as T
    return value
  }

  get size(): number {
    return this.#forms.size
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

export const runSecrets = new Secrets()

export function redact(text: string): string {
  return runSecrets.redact(text)
}

/** As a line that shows the inputs gives it. */
export function masked(secret: string | undefined): string {
  return secret ? REDACTED : ''
}

const guarded = new WeakSet<object>()

/**
 * Makes every text written to the stream pass redact(): a face's last writer. Bytes (a Buffer) are
 * written as they are: they are not text of ours (the test runner's protocol, for one).
 */
export function redactWrites(stream: NodeJS.WriteStream): void {
  if (guarded.has(stream)) return
  guarded.add(stream)
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean
  stream.write = (chunk: unknown, ...rest: unknown[]) =>
    write(typeof chunk === 'string' ? redact(chunk) : chunk, ...rest)
}
