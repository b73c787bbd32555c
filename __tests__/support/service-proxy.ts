// The service and its store as a deploy sees them through a stand-in: each API call passed on to the
// emulator, the site's presigned URLs made to point here, each PUT passed on to the emulator's store.
// Hooks run at the steps a test acts on, so that its verdict depends on events, not on timing.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Emulator } from '../../src/emulator/index.ts'

export interface ProxyHooks {
  /** Before an API call is passed on: its method and path. */
  api?: (method: string, url: string) => Promise<void>
  /** Once a PUT's body was received whole, before it is passed on to the store. */
  put?: (url: string) => Promise<void>
  /** Sends the store's answer (default: as it came, its ETag kept). */
  answer?: (res: ServerResponse, store: { status: number; etag: string | undefined; body: Buffer }) => void
}

export interface ServiceProxy {
  url: string
  close: () => Promise<void>
}

async function bodyOf(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of message) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export async function startServiceProxy(emulator: Emulator, hooks: ProxyHooks = {}): Promise<ServiceProxy> {
  let url = ''
  const toApi = async (req: IncomingMessage, res: ServerResponse) => {
    const sent = await bodyOf(req)
    await hooks.api?.(req.method!, req.url!)
    const headers: Record<string, string> = {}
    for (const name of ['authorization', 'content-type', 'accept'])
      if (typeof req.headers[name] === 'string') headers[name] = req.headers[name]
    const upstream = await fetch(emulator.url + req.url, {
      method: req.method,
      headers,
      body: sent.length ? sent : undefined,
    })
    const text = (await upstream.text()).replaceAll(emulator.storeUrl, `${url}/store`)
    const out: Record<string, string> = { 'content-type': 'application/json' }
    for (const [name, value] of upstream.headers) if (name.startsWith('rvt-')) out[name] = value
    res.writeHead(upstream.status, out)
    res.end(text)
  }
  const toStore = async (req: IncomingMessage, res: ServerResponse) => {
    const sent = await bodyOf(req)
    await hooks.put?.(req.url!)
    const store = new URL(emulator.storeUrl)
    const headers: Record<string, string> = { host: store.host }
    for (const name of ['content-length', 'content-type'])
      if (typeof req.headers[name] === 'string') headers[name] = req.headers[name]
    const path = req.url!.slice('/store'.length)
    const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
      const put = httpRequest(
        { host: store.hostname, port: store.port, method: 'PUT', path, headers },
        resolve,
      )
      put.on('error', reject)
      put.end(sent)
    })
    const answer = { status: upstream.statusCode!, etag: upstream.headers.etag, body: await bodyOf(upstream) }
    if (hooks.answer) return hooks.answer(res, answer)
    res.writeHead(answer.status, answer.etag ? { etag: answer.etag } : {})
    res.end(answer.body)
  }
  const server = createServer((req, res) => {
    const forward = req.url!.startsWith('/store/') ? toStore : toApi
    forward(req, res).catch((error: unknown) => {
      res.writeHead(502)
      res.end(String(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
