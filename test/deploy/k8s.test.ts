// deploy/k8s: a kustomize base (deploy/k8s/base) and two overlays (dev, production), each
// rendered by `kubectl kustomize` (#48) and checked the same way: every resource parses and sits
// in the variant's namespace; each service runs with readiness (/readyz) and liveness (/healthz)
// probes, resource requests and limits, a PodDisruptionBudget and a Service; images are
// Dockerfile targets; the worker keeps its outbox on a volume; shutdown has its grace. The
// placeholder Secret and the migration Job are applied apart (not in the kustomization) and are
// checked with each variant as written. Needs kubectl: under CI=true its absence fails.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { missingRequirement } from '@ax/testing';
import { describe, expect, it } from 'vitest';
import { arr, deployDir, hasCommand, knownAxVariables, obj, parseDockerfile, parseYamlDocuments, readRepoFile, renderKustomize, SERVICES } from './support.js';

const baseDir = path.join(deployDir, 'k8s', 'base');
/** Applied apart from the kustomization (docs/deploy.md): checked as written, with every variant. */
const APART = ['secret.yaml', 'migrate-job.yaml'];
const hasKubectl = hasCommand('kubectl');

type Manifest = Record<string, unknown>;
type ServiceName = (typeof SERVICES)[number]['name'];
interface Variant {
  /** Under deploy/k8s. */
  readonly dir: string;
  readonly namespace: string;
  readonly replicas: Readonly<Record<ServiceName, number>>;
}
const VARIANTS: readonly Variant[] = [
  { dir: 'base', namespace: 'ax', replicas: { scheduler: 2, broker: 2, worker: 2, 'admin-api': 2 } },
  { dir: 'overlays/dev', namespace: 'ax-dev', replicas: { scheduler: 1, broker: 1, worker: 1, 'admin-api': 1 } },
  { dir: 'overlays/production', namespace: 'ax', replicas: { scheduler: 2, broker: 2, worker: 3, 'admin-api': 2 } },
];

const kindOf = (m: Manifest): string => String(m.kind);
const nameOf = (m: Manifest): string => String(obj(m.metadata, 'metadata').name);
const podSpec = (workload: Manifest): Manifest => obj(obj(obj(workload.spec, 'spec').template, 'template').spec, 'pod spec');
const containers = (workload: Manifest): Manifest[] => arr(podSpec(workload).containers, 'containers').map((c) => obj(c, 'container'));
/** The env value of a container (literal only). */
const envValue = (c: Manifest, name: string): Manifest | undefined =>
  arr(c.env ?? [], 'env').map((e) => obj(e, 'env')).find((e) => e.name === name);
const apart = APART.flatMap((f) => parseYamlDocuments(readFileSync(path.join(baseDir, f), 'utf8'), `deploy/k8s/base/${f}`).map((doc) => ({ file: f, doc: obj(doc, f) })));

describe.skipIf(missingRequirement(it, { name: 'kubectl', present: hasKubectl, install: 'the kubectl binary of https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/ (it bundles kustomize)' }))('deploy/k8s', () => {
  describe.each(VARIANTS)('deploy/k8s/$dir (kubectl kustomize)', ({ dir, namespace, replicas }) => {
    const rendered = hasKubectl ? renderKustomize(path.join(deployDir, 'k8s', dir)).map((doc) => ({ file: `kustomize ${dir}`, doc: obj(doc, dir) })) : [];
    const resources = [...rendered, ...apart];
    const find = (kind: string, name: string): Manifest | undefined => resources.map((r) => r.doc).find((d) => kindOf(d) === kind && nameOf(d) === name);
    const configMap = obj(find('ConfigMap', 'ax-config')?.data ?? {}, 'ax-config data');
    const shutdownGraceS = Number(configMap.AX_SHUTDOWN_GRACE_S);

    it(`renders, and every resource has a kind, a name and the namespace ${namespace}`, () => {
      expect(rendered.length).toBeGreaterThan(10);
      expect(rendered.filter((r) => kindOf(r.doc) === 'Namespace').map((r) => nameOf(r.doc))).toEqual([namespace]);
      for (const { file, doc } of rendered) {
        expect(doc.apiVersion, file).toBeTruthy();
        expect(nameOf(doc), file).toMatch(/^[a-z0-9-]+$/);
        if (kindOf(doc) !== 'Namespace') expect(obj(doc.metadata, file).namespace, `${file} ${nameOf(doc)}`).toBe(namespace);
      }
      // the files applied apart name the base's namespace (docs/deploy.md says how to apply them elsewhere)
      for (const { file, doc } of apart) expect(obj(doc.metadata, file).namespace, `${file} ${nameOf(doc)}`).toBe('ax');
    });

    it(`runs ${SERVICES.map((s) => `${replicas[s.name]} ${s.name}`).join(', ')}`, () => {
      for (const { name } of SERVICES) {
        const workload = find(name === 'worker' ? 'StatefulSet' : 'Deployment', `ax-${name}`);
        expect(obj(workload?.spec, `ax-${name} spec`).replicas, name).toBe(replicas[name]);
        // a budget that no eviction can meet would hang every node drain
        const pdb = obj(find('PodDisruptionBudget', `ax-${name}`)?.spec ?? {}, `ax-${name} pdb`);
        if (pdb.minAvailable !== undefined) expect(Number(pdb.minAvailable), `ax-${name} minAvailable`).toBeLessThan(replicas[name]);
      }
    });

    it('has a ConfigMap, and a Secret with placeholders only', () => {
      expect(shutdownGraceS).toBeGreaterThan(0);
      // NODE_ENV=production makes AX_HTTP_EXECUTOR_ALLOW required (worker, admin API).
      expect(configMap.NODE_ENV).toBe('production');
      expect(String(configMap.AX_HTTP_EXECUTOR_ALLOW)).not.toBe('');
      expect(String(configMap.AX_HTTP_EXECUTOR_ALLOW)).not.toBe('*');
      const secret = find('Secret', 'ax-secrets');
      const data = obj(secret?.stringData, 'ax-secrets stringData');
      for (const [key, value] of Object.entries(data)) {
        if (value === '') continue;
        expect(String(value), key).toContain('CHANGE_ME');
      }
      expect(Object.keys(data)).toEqual(expect.arrayContaining(['AX_MYSQL_URL', 'AX_REDIS_URL', 'AX_AMQP_URL', 'AX_ADMIN_TOKEN', 'AX_EXECUTOR_SECRET']));
    });

    describe.each(SERVICES.map((s) => ({ ...s, kind: s.name === 'worker' ? 'StatefulSet' : 'Deployment' })))('$name', ({ name, port, kind }) => {
      const workload = find(kind, `ax-${name}`);

      it(`is a ${kind} of the ax/${name} image on port ${port}`, () => {
        expect(workload, `${kind} ax-${name}`).toBeDefined();
        const [container] = containers(workload ?? {});
        expect(String(container?.image)).toMatch(new RegExp(`^ax/${name}:\\d+\\.\\d+\\.\\d+$`));
        expect(envValue(container ?? {}, 'AX_HTTP_PORT')?.value).toBe(String(port));
        const ports = arr(container?.ports, 'ports').map((p) => obj(p, 'port'));
        expect(ports).toContainEqual(expect.objectContaining({ name: 'http', containerPort: port }));
      });

      it('has readiness on /readyz, liveness on /healthz, requests and limits', () => {
        for (const container of containers(workload ?? {})) {
          const readiness = obj(obj(container.readinessProbe, 'readinessProbe').httpGet, 'readiness httpGet');
          const liveness = obj(obj(container.livenessProbe, 'livenessProbe').httpGet, 'liveness httpGet');
          expect(readiness.path).toBe('/readyz');
          expect(liveness.path).toBe('/healthz');
          const res = obj(container.resources, 'resources');
          for (const part of ['requests', 'limits']) {
            const r = obj(res[part], part);
            expect(r.cpu, `${part}.cpu`).toBeDefined();
            expect(r.memory, `${part}.memory`).toBeDefined();
          }
        }
      });

      it('caps the V8 heap at 50-75 % of the memory limit and its young generation at 16 MB semi-spaces (V8 would size both from the node, not the pod)', () => {
        const mib = (q: unknown): number => {
          const m = /^(\d+)(Mi|Gi)$/.exec(String(q));
          if (m === null) throw new Error(`memory ${String(q)} is not in Mi or Gi`);
          return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
        };
        for (const container of containers(workload ?? {})) {
          const limit = mib(obj(obj(container.resources, 'resources').limits, 'limits').memory);
          const cap = Number(/--max-old-space-size=(\d+)/.exec(String(envValue(container, 'NODE_OPTIONS')?.value))?.[1]);
          expect(cap, 'NODE_OPTIONS --max-old-space-size').toBeGreaterThanOrEqual(limit * 0.5);
          expect(cap).toBeLessThanOrEqual(limit * 0.75);
          // The old-space cap leaves the young generation alone: on Node 24 it grew to 128 MB on a
          // large node (two semi-spaces and their promotion room), 384 + 128 MB in a 512 Mi pod.
          const semi = Number(/--max-semi-space-size=(\d+)/.exec(String(envValue(container, 'NODE_OPTIONS')?.value))?.[1]);
          expect(semi, 'NODE_OPTIONS --max-semi-space-size').toBeLessThanOrEqual(16);
          expect(cap + 3 * semi).toBeLessThanOrEqual(limit * 0.85);
        }
      });

      it('runs as the image user (10001), non-root (the worker: root with only the capabilities R25 needs), and waits longer than AX_SHUTDOWN_GRACE_S on SIGTERM', () => {
        const spec = podSpec(workload ?? {});
        const security = obj(spec.securityContext, 'securityContext');
        if (name === 'worker') {
          // #44 R25: it spawns each team's jobs under the team's uid (AX_JOB_UIDS).
          expect(security.runAsUser).toBe(0);
          const [container] = containers(workload ?? {});
          const cs = obj(container?.securityContext, 'container securityContext');
          expect(cs.allowPrivilegeEscalation).toBe(false);
          const caps = obj(cs.capabilities, 'capabilities');
          expect(caps.drop).toEqual(['ALL']);
          expect([...arr(caps.add, 'add')].sort()).toEqual(['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETUID']);
          expect(String(envValue(container ?? {}, 'AX_JOB_UIDS')?.value)).toMatch(/^[a-z][a-z0-9_-]*=\d+/);
          expect(envValue(container ?? {}, 'AX_MYSQL_URL'), 'a worker never gets MySQL').toBeUndefined();
          expect(envValue(container ?? {}, 'AX_MYSQL_URL_FILE'), 'a worker never gets MySQL').toBeUndefined();
          // #44: enrolled (the test below); the one secret volume of the pod is the admin token of its init container, root's 0400
          const adminToken = arr(spec.volumes, 'volumes').map((v) => obj(v, 'volume')).find((v) => v.name === 'admin-token');
          expect(obj(adminToken?.secret, 'admin-token secret').defaultMode).toBe(0o400); // 256
        } else {
          expect(security.runAsNonRoot).toBe(true);
          expect(security.runAsUser).toBe(10001);
          // #44: credentials are mounted files (readable by the pod's group), never variables.
          const [container] = containers(workload ?? {});
          const env = arr(container?.env ?? [], 'env').map((e) => obj(e, 'env entry'));
          for (const e of env) {
            const ref = obj(obj(e.valueFrom ?? {}, 'valueFrom').secretKeyRef ?? {}, 'secretKeyRef');
            if (ref.key !== undefined) expect([e.name, ref.optional], `${name} takes ${String(e.name)} from a variable`).toEqual(['AX_ALERT_WEBHOOK_URL', true]);
          }
          for (const credential of ['AX_MYSQL_URL', 'AX_REDIS_URL']) {
            expect(String(envValue(container ?? {}, `${credential}_FILE`)?.value), `${name} ${credential}`).toBe(`/run/ax-credentials/${credential}`);
          }
          expect(security.fsGroup).toBe(10001);
          const credentials = arr(spec.volumes, 'volumes').map((v) => obj(v, 'volume')).find((v) => v.name === 'credentials');
          expect(obj(credentials?.secret, 'credentials secret').defaultMode).toBe(0o440);
        }
        expect(Number(spec.terminationGracePeriodSeconds)).toBeGreaterThanOrEqual(shutdownGraceS + 10);
      });

      it('has a PodDisruptionBudget and a Service selecting its pods', () => {
        const labels = obj(obj(obj(obj(workload?.spec, 'spec').template, 'template').metadata, 'metadata').labels, 'labels');
        const pdb = find('PodDisruptionBudget', `ax-${name}`);
        expect(pdb, 'PodDisruptionBudget').toBeDefined();
        const pdbSpec = obj(pdb?.spec, 'pdb spec');
        expect(pdbSpec.minAvailable ?? pdbSpec.maxUnavailable).toBeDefined();
        const service = find('Service', `ax-${name}`);
        expect(service, 'Service').toBeDefined();
        for (const selector of [obj(obj(pdbSpec.selector, 'pdb selector').matchLabels, 'matchLabels'), obj(obj(service?.spec, 'service spec').selector, 'service selector')]) {
          for (const [k, v] of Object.entries(selector)) expect(labels[k], k).toBe(v);
        }
      });
    });

    it('runs the worker as a StatefulSet: pod name as AX_WORKER_ID, outbox on a claimed volume', () => {
      const worker = find('StatefulSet', 'ax-worker');
      const [container] = containers(worker ?? {});
      const id = envValue(container ?? {}, 'AX_WORKER_ID');
      expect(obj(obj(id?.valueFrom, 'valueFrom').fieldRef, 'fieldRef').fieldPath).toBe('metadata.name');
      const dataDir = envValue(container ?? {}, 'AX_WORKER_DATA_DIR')?.value;
      expect(dataDir).toBe('/data');
      const mounts = arr(container?.volumeMounts, 'volumeMounts').map((m) => obj(m, 'mount'));
      const data = mounts.find((m) => m.mountPath === dataDir);
      const claims = arr(obj(worker?.spec, 'spec').volumeClaimTemplates, 'volumeClaimTemplates').map((c) => nameOf(obj(c, 'claim')));
      expect(claims).toContain(data?.name);
      expect(obj(podSpec(worker ?? {}).securityContext, 'securityContext').fsGroup).toBe(10001);
    });

    it('#44 the worker is enrolled: an init container enrolls the pod with the admin token only it mounts; the worker gets the credential file and AX_ADMIN_URL, no master secret, MySQL or service login', () => {
      const worker = find('StatefulSet', 'ax-worker');
      const spec = podSpec(worker ?? {});
      const [container] = containers(worker ?? {});
      const env = arr(container?.env ?? [], 'env').map((e) => obj(e, 'env entry'));
      const names = env.map((e) => String(e.name));
      // nothing of the stack's credentials: no master secret, no MySQL, no admin token, nothing out of a Secret
      for (const v of ['AX_EXECUTOR_SECRET', 'AX_MYSQL_URL', 'AX_ADMIN_TOKEN', 'AX_REDIS_SENTINEL_PASSWORD', 'AX_AMQP_MANAGEMENT_URL']) {
        expect(names, `worker ${v}`).not.toContain(v);
        expect(names, `worker ${v}_FILE`).not.toContain(`${v}_FILE`);
      }
      for (const e of env) expect(obj(e.valueFrom ?? {}, 'valueFrom').secretKeyRef, `worker ${String(e.name)} from a Secret`).toBeUndefined();
      expect(arr(container?.envFrom ?? [], 'envFrom').map((f) => obj(f, 'envFrom')).filter((f) => f.secretRef !== undefined)).toEqual([]);
      // the servers' addresses carry no login: its own users come from its enrollment
      for (const v of ['AX_REDIS_URL', 'AX_AMQP_URL']) {
        for (const url of String(envValue(container ?? {}, v)?.value).split(',').map((u) => new URL(u))) expect([url.username, url.password], v).toEqual(['', '']);
      }
      // no Secret volume of the pod reaches the worker container
      const secretVolumes = arr(spec.volumes, 'volumes').map((v) => obj(v, 'volume')).filter((v) => v.secret !== undefined);
      const teamSecrets = secretVolumes.filter((v) => String(obj(v.secret, 'secret').secretName).startsWith('ax-team-')).map((v) => v.name);
      const workerMounts = arr(container?.volumeMounts, 'volumeMounts').map((m) => obj(m, 'mount'));
      expect(workerMounts.map((m) => m.name).filter((n) => secretVolumes.some((v) => v.name === n) && !teamSecrets.includes(n))).toEqual([]);
      // the admin API it asks is the admin-api Service
      const adminService = obj(find('Service', 'ax-admin-api')?.spec, 'ax-admin-api spec');
      const adminPort = arr(adminService.ports, 'ports').map((p) => obj(p, 'port'))[0]?.port;
      expect(envValue(container ?? {}, 'AX_ADMIN_URL')?.value).toBe(`http://ax-admin-api:${String(adminPort)}`);

      // the init container: deploy/enroll-workers.mjs of the admin-api image, named after the pod
      const inits = arr(spec.initContainers, 'initContainers').map((c) => obj(c, 'init container'));
      expect(inits.map((c) => c.name)).toEqual(['enroll']);
      const enroll = inits[0] ?? {};
      expect(String(enroll.image)).toMatch(/^ax\/admin-api:\d+\.\d+\.\d+$/);
      expect(readRepoFile('deploy/Dockerfile')).toContain('COPY --chown=root:root deploy/enroll-workers.mjs /app/enroll-workers.mjs');
      expect(enroll.command).toEqual(['node', 'enroll-workers.mjs']);
      const [dir, workerSpec] = arr(enroll.args, 'args').map(String);
      expect(workerSpec).toMatch(/^\$\(POD_NAME\):[^:]+:/);
      expect(obj(obj(envValue(enroll, 'POD_NAME')?.valueFrom, 'valueFrom').fieldRef, 'fieldRef').fieldPath).toBe('metadata.name');
      expect(envValue(enroll, 'AX_ADMIN_URL')?.value).toBe(envValue(container ?? {}, 'AX_ADMIN_URL')?.value);
      // it writes <dir>/<pod>.credential where the worker reads it (its id is the pod's name too), on the pod's claim: a restarted pod keeps its enrollment, worker id and outbox
      expect(obj(obj(envValue(container ?? {}, 'AX_WORKER_ID')?.valueFrom, 'valueFrom').fieldRef, 'fieldRef').fieldPath).toBe('metadata.name');
      expect(envValue(container ?? {}, 'AX_WORKER_CREDENTIAL_FILE')?.value).toBe(`${dir}/$(AX_WORKER_ID).credential`);
      const initMounts = arr(enroll.volumeMounts, 'volumeMounts').map((m) => obj(m, 'mount'));
      const claims = arr(obj(worker?.spec, 'spec').volumeClaimTemplates, 'volumeClaimTemplates').map((c) => nameOf(obj(c, 'claim')));
      for (const mounts of [initMounts, workerMounts]) {
        const holding = mounts.find((m) => String(dir).startsWith(`${String(m.mountPath)}/`));
        expect(claims).toContain(holding?.name);
      }
      // the admin token: mounted by the init container only, as a file
      const tokenFile = String(envValue(enroll, 'AX_ADMIN_TOKEN_FILE')?.value);
      const tokenMount = initMounts.find((m) => tokenFile.startsWith(`${String(m.mountPath)}/`));
      const tokenVolume = secretVolumes.find((v) => v.name === tokenMount?.name);
      expect(arr(obj(tokenVolume?.secret, 'token secret').items, 'items')).toEqual([{ key: 'AX_ADMIN_TOKEN', path: tokenFile.slice(String(tokenMount?.mountPath).length + 1) }]);
      expect(workerMounts.map((m) => m.name)).not.toContain(tokenMount?.name);
      expect(envValue(enroll, 'AX_ADMIN_TOKEN')).toBeUndefined();
      const security = obj(enroll.securityContext, 'enroll securityContext');
      expect(security.allowPrivilegeEscalation).toBe(false);
      expect(obj(security.capabilities, 'capabilities').drop).toEqual(['ALL']);
      expect(obj(security.capabilities, 'capabilities').add).toBeUndefined();
      expect(obj(enroll.resources, 'resources').limits).toBeDefined();
    });

    it('#18 secrets: the worker reads job secrets from a team Secret mounted read-only under AX_SECRETS_DIR', () => {
      const worker = find('StatefulSet', 'ax-worker');
      const [container] = containers(worker ?? {});
      const dir = String(envValue(container ?? {}, 'AX_SECRETS_DIR')?.value);
      expect(dir).toBe('/etc/ax/secrets');
      const mounts = arr(container?.volumeMounts, 'volumeMounts').map((m) => obj(m, 'mount'));
      const team = mounts.find((m) => m.mountPath === `${dir}/default`);
      expect(team?.readOnly).toBe(true);
      const volume = arr(podSpec(worker ?? {}).volumes, 'volumes').map((v) => obj(v, 'volume')).find((v) => v.name === team?.name);
      expect(obj(volume?.secret, 'secret volume')).toMatchObject({ secretName: 'ax-team-default', optional: true });
      const placeholder = obj(find('Secret', 'ax-team-default')?.stringData, 'ax-team-default stringData');
      for (const [key, value] of Object.entries(placeholder)) {
        expect(key).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
        expect(String(value), key).toContain('CHANGE_ME');
      }
      for (const { doc } of resources.filter((r) => ['Deployment', 'Job'].includes(kindOf(r.doc)))) {
        for (const c of containers(doc)) expect(envValue(c, 'AX_SECRETS_DIR'), nameOf(doc)).toBeUndefined();
      }
    });

    it('runs the migration as a Job of the migrate image', () => {
      const job = find('Job', 'ax-migrate');
      const [container] = containers(job ?? {});
      expect(String(container?.image)).toMatch(/^ax\/migrate:\d+\.\d+\.\d+$/);
      expect(container?.args).toEqual(['migrate']);
      expect(podSpec(job ?? {}).restartPolicy).toBe('Never');
      expect(obj(container?.resources, 'resources').limits).toBeDefined();
    });

    it('uses only images the Dockerfile builds and variables the code reads', () => {
      const targets = new Set(parseDockerfile(readRepoFile('deploy/Dockerfile')).stages.map((s) => s.name));
      const known = knownAxVariables();
      for (const { doc } of resources) {
        if (!['Deployment', 'StatefulSet', 'Job'].includes(kindOf(doc))) continue;
        for (const c of containers(doc)) {
          const image = /^ax\/([a-z-]+):/.exec(String(c.image))?.[1];
          expect(targets, `${nameOf(doc)} image ${String(c.image)}`).toContain(image);
          for (const e of arr(c.env ?? [], 'env')) {
            const key = String(obj(e, 'env').name);
            if (key.startsWith('AX_')) expect(known, `${nameOf(doc)} sets ${key}`).toContain(key);
          }
        }
      }
      for (const key of Object.keys(configMap)) if (key.startsWith('AX_')) expect(known, `ax-config ${key}`).toContain(key);
    });
  });

  it('lists every manifest but the Job and the placeholder Secret in base/kustomization.yaml, and the overlays build on the base', () => {
    const kustomization = obj(parseYamlDocuments(readFileSync(path.join(baseDir, 'kustomization.yaml'), 'utf8'), 'deploy/k8s/base/kustomization.yaml')[0], 'kustomization');
    const listed = arr(kustomization.resources, 'resources');
    const files = readdirSync(baseDir).filter((f) => /\.ya?ml$/.test(f));
    const expected = files.filter((f) => !['kustomization.yaml', ...APART].includes(f));
    expect([...listed].sort()).toEqual(expected.sort());
    for (const overlay of ['dev', 'production']) {
      const file = path.join(deployDir, 'k8s', 'overlays', overlay, 'kustomization.yaml');
      expect(arr(obj(parseYamlDocuments(readFileSync(file, 'utf8'), file)[0], overlay).resources, `${overlay} resources`), overlay).toEqual(['../../base']);
    }
  });
});
