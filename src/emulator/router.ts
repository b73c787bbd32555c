// Matching a request's method and decoded path segments against route patterns.
import { UUID } from '../api/rules.ts'

export interface RouteMatch<R> {
  route: R
  params: Record<string, string>
}

export function isUuid(value: string): boolean {
  return UUID.test(value)
}

/**
 * The route of a method and path; `wrongMethod` when only another method has that path (405).
 * Parameters named `*_id` match UUIDs only, as the real service's routes do.
 */
export function matchRoute<R extends { method: string; pattern: string }>(
  routes: readonly R[],
  method: string,
  segments: readonly string[],
): RouteMatch<R> | 'wrongMethod' | undefined {
  let wrongMethod = false
  for (const route of routes) {
    const params = matchPattern(route.pattern, segments)
    if (!params) continue
    if (route.method === method) return { route, params }
    wrongMethod = true
  }
  return wrongMethod ? 'wrongMethod' : undefined
}

function matchPattern(pattern: string, segments: readonly string[]): Record<string, string> | undefined {
  const parts = pattern.split('/').slice(1)
  if (parts.length !== segments.length) return undefined
  const params: Record<string, string> = {}
  for (const [index, part] of parts.entries()) {
    const segment = segments[index] ?? ''
    if (part.startsWith(':')) {
      if (segment === '') return undefined
      if (part.endsWith('_id') && !isUuid(segment)) return undefined
      params[part.slice(1)] = segment
    } else if (part !== segment) {
      return undefined
    }
  }
  return params
}
