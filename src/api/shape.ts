// The shape an operation promises for its answer, checked before anything reads it: a missing or
// wrong field fails naming the field (`namespace_id is missing`), not later as a TypeError.

import { NAME_ID, UUID, hostNameProblem, isValidDomain } from './rules.ts'

export type ShapeCheck = (value: unknown, at: string) => string | undefined

function describe(value: unknown): string {
  if (value === undefined) return 'missing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value).slice(0, 40)}`
}

function named(at: string, what: string, value: unknown): string {
  return value === undefined ? `${at} is missing` : `${at} is ${describe(value)}, not ${what}`
}

function fits(what: string, test: (value: unknown) => boolean): ShapeCheck {
  return (value, at) => (test(value) ? undefined : named(at, what, value))
}

const isString = (value: unknown): value is string => typeof value === 'string'

export const aString = fits('a string', isString)
/** A UUID: an id of another form (a line break, a path, a workflow command) never reaches a log, output or URL. */
export const anId = fits('an id (a UUID)', (value) => isString(value) && UUID.test(value))
/** A game's or a namespace's name id, at most a DNS label long: it becomes part of a host name. */
export const aNameId = fits(
  'a name id (a-z, 0-9 and single dashes)',
  (value) => isString(value) && value.length <= 63 && NAME_ID.test(value),
)
/** The host of the url output and of links in the comment. */
export const aHostName = fits(
  'a host name',
  (value) => isString(value) && isValidDomain(value) && !hostNameProblem(value),
)
export const aNumber = fits('a number', (value) => typeof value === 'number' && Number.isFinite(value))
export const aBoolean = fits('true or false', (value) => typeof value === 'boolean')
export const anObject = fits(
  'an object',
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
)

/** Absent or null, or fits `check`. */
export function optional(check: ShapeCheck): ShapeCheck {
  return (value, at) => (value === undefined || value === null ? undefined : check(value, at))
}

export function listOf(item: ShapeCheck): ShapeCheck {
  return (value, at) => {
    if (!Array.isArray(value)) return named(at, 'a list', value)
    for (let i = 0; i < value.length; i++) {
      const problem = item(value[i], `${at}[${i}]`)
      if (problem) return problem
    }
    return undefined
  }
}

/** Fields not named are allowed: the service adds some. */
export function objectOf(fields: Record<string, ShapeCheck>): ShapeCheck {
  return (value, at) => {
    const problem = anObject(value, at)
    if (problem) return problem
    for (const [name, check] of Object.entries(fields)) {
      const found = check((value as Record<string, unknown>)[name], at ? `${at}.${name}` : name)
      if (found) return found
    }
    return undefined
  }
}

export function oneOf(values: readonly string[]): ShapeCheck {
  return fits(`one of ${values.join(', ')}`, (value) => isString(value) && values.includes(value))
}
