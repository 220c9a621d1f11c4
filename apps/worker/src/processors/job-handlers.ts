import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { JOBS, JOB_NAMES, type JobName, type QueueName } from '@cardpull/queue';

export const JOB_PROCESSORS = Symbol('JOB_PROCESSORS');

export interface JobHandlerClaim {
  readonly queue: QueueName;
  readonly handles: readonly JobName[];
  readonly constructor: { name: string };
}

/**
 * What is wrong with these processors against the job list (JOBS): every job name must have exactly one
 * handler, on the job's own queue. An empty list means the worker may start.
 */
export function jobHandlerProblems(processors: readonly JobHandlerClaim[]): string[] {
  const problems: string[] = [];
  const owners = new Map<JobName, string[]>(JOB_NAMES.map((n) => [n, []]));
  for (const p of processors) {
    for (const name of p.handles) {
      const list = owners.get(name);
      if (!list) {
        problems.push(`${p.constructor.name} handles '${name}', which is not in the job list (JOBS)`);
        continue;
      }
      list.push(p.constructor.name);
      if (JOBS[name].queue !== p.queue) problems.push(`${p.constructor.name} handles '${name}' on queue '${p.queue}', but JOBS puts it on '${JOBS[name].queue}'`);
    }
  }
  for (const [name, list] of owners) {
    if (list.length === 0) problems.push(`no handler for job '${name}' (queue '${JOBS[name].queue}')`);
    if (list.length > 1) problems.push(`job '${name}' has ${list.length} handlers: ${list.join(', ')}`);
  }
  return problems;
}

/**
 * The start-up check of the job list: the worker refuses to start (Nest's init fails before any Worker
 * takes a job) unless every job name has exactly one handler.
 */
@Injectable()
export class JobHandlers implements OnModuleInit {
  constructor(@Inject(JOB_PROCESSORS) private readonly processors: JobHandlerClaim[]) {}

  onModuleInit(): void {
    const problems = jobHandlerProblems(this.processors);
    if (problems.length) throw new Error(`The worker cannot start: ${problems.join('; ')}`);
  }
}
