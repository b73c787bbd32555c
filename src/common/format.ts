export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

/** The first `shown` of `list`, and how many more: `a, b, and 3 more`. */
export function listSome(list: readonly string[], shown: number): string {
  return `${list.slice(0, shown).join(', ')}${list.length > shown ? `, and ${list.length - shown} more` : ''}`
}

export function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** A duration to the tenth of a second: `2.6 s`. */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/** Bytes in the largest binary unit that keeps the number at or above 1: `512 B`, `2.2 KiB`, `1.5 GiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** What a thrown value says: an error's own message, or the value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** An error's message, and its cause's where the message does not say it already. */
export function errorMessage(error: unknown): string {
  const message = messageOf(error)
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : ''
  return cause && !message.includes(cause) ? `${message}: ${cause}` : message
}

/**
 * The text cut to at most `max` characters of its own, with an ellipsis and its full length said:
 * `Error: xxxx… (3,145,728 characters)`. Text from outside (a page's console, a service's answer)
 * passes here before it is kept, so what is said of it stays small whatever it holds.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text
  // Never half of a surrogate pair: its other half alone shows as a replacement character.
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max
  return `${text.slice(0, end)}… (${text.length.toLocaleString('en')} characters)`
}
