// Matching a request's method and decoded path segments against route patterns.

export interface RouteMatch<R> {
  route: R
  params: Record<string, string>
}

export function matchRoute<R extends { method: string; pattern: string }>(
  routes: readonly R[],
  method: string,
  segments: readonly string[],
): RouteMatch<R> | undefined {
  for (const route of routes) {
    if (route.method !== method) continue
    const params = matchPattern(route.pattern, segments)
    if (params) return { route, params }
  }
  return undefined
}

function matchPattern(pattern: string, segments: readonly string[]): Record<string, string> | undefined {
  const parts = pattern.split('/').slice(1)
  if (parts.length !== segments.length) return undefined
  const params: Record<string, string> = {}
  for (const [index, part] of parts.entries()) {
    const segment = segments[index] ?? ''
    if (part.startsWith(':')) {
      if (segment === '') return undefined
      params[part.slice(1)] = segment
    } else if (part !== segment) {
      return undefined
    }
  }
  return params
}
