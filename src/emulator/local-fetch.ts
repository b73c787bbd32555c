import { Agent, fetch } from 'undici'

/**
 * GETs `url` as a browser on this machine would open it: its host name (`*.localhost`, which browsers
 * resolve to the loopback address, or a custom domain) is resolved to 127.0.0.1, where the emulator
 * serves each namespace by the Host header. For the demo and the tests.
 */
export async function fetchLocally(url: string): Promise<{ status: number; headers: Headers; text: string }> {
  const agent = new Agent({
    connect: {
      lookup: (_hostname, options, callback) => {
        if ((options as { all?: boolean }).all) callback(null, [{ address: '127.0.0.1', family: 4 }])
        else
          (callback as unknown as (error: null, address: string, family: number) => void)(
            null,
            '127.0.0.1',
            4,
          )
      },
    },
  })
  try {
    const response = await fetch(url, { dispatcher: agent })
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
    }
  } finally {
    await agent.close()
  }
}
