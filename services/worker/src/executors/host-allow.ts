/**
 * `AX_HTTP_EXECUTOR_ALLOW`: the hosts an `http` task may call. Entries: `*` (any), `host`,
 * `*.domain` (any sub-domain, not the domain itself), `host:port`, `[v6]` / `[v6]:port`.
 * An entry without a port allows every port.
 */
export type HostAllowList = (url: URL) => boolean;

/** Builds the matcher of an allow list (entries already lower-cased by the config). */
export function hostAllowList(entries: readonly string[]): HostAllowList {
  const rules = entries.map((entry) => {
    if (entry === '*') return { any: true, host: '', port: undefined as string | undefined, wildcard: false };
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    const host = (m?.[1] ?? entry).toLowerCase();
    return { any: false, host: host.startsWith('*.') ? host.slice(1) : host, port: m?.[2], wildcard: host.startsWith('*.') };
  });
  return (url: URL) => {
    const host = url.hostname.toLowerCase();
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return rules.some((rule) => {
      if (rule.any) return true;
      if (rule.port !== undefined && rule.port !== port) return false;
      return rule.wildcard ? host.endsWith(rule.host) && host.length > rule.host.length : host === rule.host;
    });
  };
}
