// GET /cloud/bootstrap: what the service says about itself, its CDN domain above all (the official
// client builds a namespace's URL from `domains.cdn` rather than assuming one).

import type { ApiRoute } from '../core.ts'

export const getBootstrap: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/bootstrap',
  handle(context) {
    const { baseUrl, options } = context.core
    const api = new URL(baseUrl)
    // A bare domain, as the real service answers: a client serves it with the API's scheme and port
    // when the API is not https on 443 (resolveCdnDomain).
    const cdn = options.bootstrapCdnDomain === undefined ? options.cdnDomain : options.bootstrapCdnDomain
    return {
      cluster: 'oss',
      access: 'public',
      domains: { main: api.host, ...(cdn === null ? {} : { cdn }), job: `job.${options.cdnDomain}` },
      origins: { hub: baseUrl },
      captcha: {},
      login_methods: { access_token: true, email: false },
      deploy_hash: 'gamehost-emulator',
    }
  },
}
