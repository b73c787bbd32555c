// GET /cloud/bootstrap: what the service says of itself. Clients read the domain namespaces are
// served under from `domains.cdn` (the hosted service's is rivet.game); here the emulator's cdnDomain.

import type { ApiRoute } from '../core.ts'

export const bootstrap: ApiRoute = {
  method: 'GET',
  pattern: '/cloud/bootstrap',
  handle(context) {
    const { cdnDomain } = context.core.options
    return {
      cluster: 'oss',
      access: 'public',
      domains: { main: cdnDomain, cdn: cdnDomain, job: `job.${cdnDomain}` },
      origins: { hub: `http://${cdnDomain}` },
      captcha: {},
      login_methods: { access_token: true, email: false },
      deploy_hash: 'emulator',
    }
  },
}
