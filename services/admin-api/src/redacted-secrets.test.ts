import { describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow, redactTaskSecrets, type TaskDefinition } from '@ax/core';
import { restoreRedactedSecrets } from './redacted-secrets.js';

const def = (exec: Record<string, unknown>): TaskDefinition => parseTaskDefinitionOrThrow({ name: 'job', schedule: { type: 'none' }, exec });
const shell = def({ type: 'shell', command: ['run.sh'], env: { PASS: 'p1', REF: { secretRef: 'K' }, MODE: 'full' } });
const http = def({ type: 'http', url: 'http://a.internal/x', headers: { Authorization: 'Bearer t1', 'X-Ref': { secretRef: 'K' } } });

describe('restoreRedactedSecrets', () => {
  it('turns the redacted form of a stored task back into the stored task, for env and headers', () => {
    expect(restoreRedactedSecrets(redactTaskSecrets(shell), shell)).toEqual({ ok: true, value: shell });
    expect(restoreRedactedSecrets(redactTaskSecrets(http), http)).toEqual({ ok: true, value: http });
  });

  it('#22 does the same for the env of a python task', () => {
    const python = def({ type: 'python', code: 'print(1)', env: { PASS: 'p1', REF: { secretRef: 'K' } } });
    expect(redactTaskSecrets(python).exec).toMatchObject({ env: { PASS: '***', REF: { secretRef: 'K' } } });
    expect(restoreRedactedSecrets(redactTaskSecrets(python), python)).toEqual({ ok: true, value: python });
    const fresh = restoreRedactedSecrets(redactTaskSecrets(python), null);
    expect(fresh.ok ? [] : fresh.issues.map((i) => i.path)).toEqual(['exec.env.PASS']);
  });

  it('takes values other than "***" as sent, and leaves a definition without "***" as it is', () => {
    const next = def({ type: 'shell', command: ['run.sh'], env: { PASS: '***', MODE: 'delta', NEW: { secretRef: 'N' } } });
    const restored = restoreRedactedSecrets(next, shell);
    expect(restored.ok && restored.value.exec).toEqual({ ...next.exec, env: { PASS: 'p1', MODE: 'delta', NEW: { secretRef: 'N' } } });
    const plugin = def({ type: 'plugin', name: 'archive', config: { token: 'plain' } });
    expect(restoreRedactedSecrets(plugin, null)).toEqual({ ok: true, value: plugin });
    expect(restoreRedactedSecrets(shell, null)).toEqual({ ok: true, value: shell });
  });

  it('#44 restores a plugin config\'s strings and an http URL\'s user-info from their redacted form, and refuses a mask with nothing behind it', () => {
    const plugin = def({ type: 'plugin', name: 'archive', config: { token: 't1', deep: { list: ['a', 2] }, n: 1 } });
    const shown = redactTaskSecrets(plugin);
    expect(shown.exec).toEqual({ type: 'plugin', name: 'archive', config: { token: '***', deep: { list: ['***', 2] }, n: 1 } });
    expect(restoreRedactedSecrets(shown, plugin)).toEqual({ ok: true, value: plugin });
    const otherPlugin = restoreRedactedSecrets(def({ type: 'plugin', name: 'other', config: { token: '***' } }), plugin);
    expect(otherPlugin.ok ? [] : otherPlugin.issues.map((i) => i.path)).toEqual(['exec.config.token']);
    const fresh = restoreRedactedSecrets(def({ type: 'plugin', name: 'archive', config: { token: '***' } }), null);
    expect(fresh.ok ? [] : fresh.issues.map((i) => i.path)).toEqual(['exec.config.token']);

    const withUser = def({ type: 'http', url: 'http://u:p%40ss@h.internal:81/x?y=1' });
    const masked = redactTaskSecrets(withUser);
    expect(masked.exec).toMatchObject({ url: 'http://***:***@h.internal:81/x?y=1' });
    expect(restoreRedactedSecrets(masked, withUser)).toEqual({ ok: true, value: withUser });
    const noUser = restoreRedactedSecrets(masked, def({ type: 'http', url: 'http://h.internal/' }));
    expect(noUser.ok ? [] : noUser.issues.map((i) => i.path)).toEqual(['exec.url']);
    expect(redactTaskSecrets(def({ type: 'http', url: 'http://h.internal/' })).exec).toMatchObject({ url: 'http://h.internal/' });
  });

  it('refuses "***" for a new task, naming the field and the task', () => {
    expect(restoreRedactedSecrets(redactTaskSecrets(http), null)).toEqual({
      ok: false,
      issues: [
        {
          path: 'exec.headers.Authorization',
          message:
            'exec.headers.Authorization: "***" keeps the stored value of task "job", but a new task has no stored value to keep; send the value itself or {"secretRef":"NAME"}',
        },
      ],
    });
  });

  it('refuses "***" for a key stored as a secretRef, a key not stored, or another exec type', () => {
    const refused = restoreRedactedSecrets(def({ type: 'shell', command: ['run.sh'], env: { REF: '***', GONE: '***' } }), shell);
    expect(refused.ok ? [] : refused.issues.map((i) => i.message)).toEqual([
      'exec.env.REF: "***" keeps the stored value of task "job", but the stored value is a {"secretRef":…}, not a literal value; send the value itself or {"secretRef":"NAME"}',
      'exec.env.GONE: "***" keeps the stored value of task "job", but the stored task has no value for "GONE"; send the value itself or {"secretRef":"NAME"}',
    ]);
    const otherType = restoreRedactedSecrets(def({ type: 'http', url: 'http://a.internal/x', headers: { Authorization: '***' } }), shell);
    expect(otherType.ok ? [] : otherType.issues.map((i) => i.message)).toEqual([
      'exec.headers.Authorization: "***" keeps the stored value of task "job", but the stored task has no exec.headers (it is a shell task with exec.env); send the value itself or {"secretRef":"NAME"}',
    ]);
  });

  it('quotes a header name that is not a plain word in the path', () => {
    const refused = restoreRedactedSecrets(def({ type: 'http', url: 'http://a.internal/x', headers: { 'X.Key': '***' } }), http);
    expect(refused.ok ? [] : refused.issues.map((i) => i.path)).toEqual(['exec.headers["X.Key"]']);
  });
});
