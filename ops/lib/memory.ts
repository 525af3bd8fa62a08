/**
 * Memory of a server process read through its V8 inspector (started with `--inspect` on loopback):
 * used by the benchmarks and by tests that check memory returns to its baseline.
 */
import { once } from 'node:events';
import WebSocket from 'ws';

/**
 * Runs a full garbage collection in the server (through its V8 inspector) and reads its memory
 * right after: heap in use and RSS without the garbage that makes raw RSS readings swing.
 */
export async function collectedMemory(
  inspectPort: number,
  host = '127.0.0.1',
): Promise<{ rss: number; heapUsed: number }> {
  const targets = (await (await fetch(`http://${host}:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await once(ws, 'open');
  let next = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<{ result?: { value?: string } }>((resolve, reject) => {
      const id = ++next;
      const onMessage = (data: WebSocket.RawData) => {
        const m = JSON.parse(String(data)) as { id?: number; result?: object; error?: { message: string } };
        if (m.id !== id) return;
        ws.off('message', onMessage);
        if (m.error) reject(new Error(`${method}: ${m.error.message}`));
        else resolve((m.result ?? {}) as { result?: { value?: string } });
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    const r = await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    const m = JSON.parse(r.result?.value ?? '{}') as { rss: number; heapUsed: number };
    return { rss: m.rss, heapUsed: m.heapUsed };
  } finally {
    ws.close();
  }
}
