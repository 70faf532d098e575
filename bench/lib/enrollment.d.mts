export interface BenchEnrollment {
  readonly id: string;
  readonly file: string;
  readonly adminUrl: string;
}
export function workerLoginOf(env: Readonly<Record<string, string | undefined>>, baselineRound: boolean): 'enrollment' | 'service';
export function roundAdminToken(): string;
export function busAdminOf(amqpUrl: string): { managementUrl: string; vhost: string };
export function enrollBenchWorkers(options: { adminUrl: string; token: string; dir: string }): Promise<BenchEnrollment>;
export function enrolledWorkerEnv(enrollment: BenchEnrollment): Record<string, string | undefined>;
export function enrolledWorkerId(enrollment: BenchEnrollment | undefined, localId: string): string;
export function deleteEnrollmentLogins(options: { enrollment: BenchEnrollment; amqpUrl: string; redis: unknown; namespace: string }): Promise<void>;
