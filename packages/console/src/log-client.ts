/**
 * The log endpoints as the viewer uses them (ADMIN-API.md "Job output (logs)"): one page by
 * offset with its `X-Ax-Log-*` headers, the live event stream, and the whole log as a file.
 */
import { ApiError, type ApiClient } from './api';
import { readSse } from './sse';
import type { LogChunkEvent, LogEndEvent, LogPageHeaders, LogView } from './types';

/** Bytes per page the viewer asks for (the API allows 4 MiB; a page is what a browser draws at ease). */
export const LOG_PAGE_BYTES = 256 * 1024;

const logPath = (executionId: string): string => `/api/v1/executions/${encodeURIComponent(executionId)}/log`;

function numberHeader(headers: Headers, name: string): number {
  const value = Number(headers.get(name));
  if (!Number.isFinite(value)) throw new ApiError(`the admin API sent no ${name} header`, 200, 'HTTP');
  return value;
}

/** The `X-Ax-Log-*` headers of a page. */
export function pageHeaders(headers: Headers): LogPageHeaders {
  return {
    size: numberHeader(headers, 'X-Ax-Log-Size'),
    complete: headers.get('X-Ax-Log-Complete') === 'true',
    truncated: headers.get('X-Ax-Log-Truncated') === 'true',
    offset: numberHeader(headers, 'X-Ax-Log-Offset'),
    nextOffset: numberHeader(headers, 'X-Ax-Log-Next-Offset'),
  };
}

/** One page: bytes `[offset, offset+limit)` of the view, as the API cut it. */
export async function fetchLogPage(
  client: ApiClient,
  executionId: string,
  view: LogView,
  offset: number,
  limit: number,
  signal?: AbortSignal,
): Promise<{ headers: LogPageHeaders; bytes: Uint8Array }> {
  const response = await client.getRaw(logPath(executionId), { stream: view, offset, limit }, { accept: 'text/plain', ...(signal === undefined ? {} : { signal }) });
  const headers = pageHeaders(response.headers);
  return { headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** What the stream reports. */
export interface LogStreamHandlers {
  /** A chunk: its text, where it starts and where the next one starts (its `id:`). */
  onChunk: (chunk: LogChunkEvent, end: number) => void;
  onEnd: (end: LogEndEvent) => void;
}

/**
 * Follows the view from `offset` until `event: end` (resolves true) or until the connection
 * closes without it (resolves false: the caller reconnects from the last `end` it got).
 */
export async function followLog(client: ApiClient, executionId: string, view: LogView, offset: number, handlers: LogStreamHandlers, signal: AbortSignal): Promise<boolean> {
  const response = await client.getRaw(`${logPath(executionId)}/stream`, { stream: view, offset }, { accept: 'text/event-stream', signal });
  let ended = false;
  await readSse(response, (event) => {
    if (event.event === 'chunk') {
      const chunk = JSON.parse(event.data) as LogChunkEvent;
      const end = Number(event.id);
      handlers.onChunk(chunk, Number.isFinite(end) ? end : chunk.offset);
    } else if (event.event === 'end') {
      ended = true;
      handlers.onEnd(JSON.parse(event.data) as LogEndEvent);
    }
  });
  return ended;
}

/** The whole view as one Blob, read page by page (4 MiB each) until the API's size is reached. */
export async function fetchWholeLog(client: ApiClient, executionId: string, view: LogView): Promise<Blob> {
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (;;) {
    const { headers, bytes } = await fetchLogPage(client, executionId, view, offset, 4 * 1024 * 1024);
    parts.push(bytes);
    if (headers.nextOffset <= offset || headers.nextOffset >= headers.size) break;
    offset = headers.nextOffset;
  }
  return new Blob(parts as BlobPart[], { type: 'text/plain' });
}

/** Saves the whole view as `<executionId>.<view>.log` through a temporary link. */
export async function downloadLog(client: ApiClient, executionId: string, view: LogView): Promise<void> {
  const blob = await fetchWholeLog(client, executionId, view);
  const url = URL.createObjectURL(blob);
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = `${executionId}.${view === 'all' ? 'log' : `${view}.log`}`;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // the click has started the download; the URL may go once it has been read
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}
