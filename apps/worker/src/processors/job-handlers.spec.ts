import { Test } from '@nestjs/testing';
import { JOB_NAMES } from '@cardpull/queue';
import { JOB_PROCESSORS, JobHandlers, jobHandlerProblems, type JobHandlerClaim } from './job-handlers';

const claim = (name: string, queue: 'orders' | 'callbacks', handles: string[]): JobHandlerClaim =>
  ({ queue, handles, constructor: { name } }) as unknown as JobHandlerClaim;
const steps = claim('OrderStepsProcessor', 'orders', ['sync_call', 'async_create', 'async_poll', 'resume_check']);
const callbacks = claim('CallbacksProcessor', 'callbacks', ['deliver_callback']);

describe('the job list: every job name has exactly one handler, or the worker refuses to start', () => {
  it('the two processors cover the job list exactly', () => {
    expect(jobHandlerProblems([steps, callbacks])).toEqual([]);
    expect(JOB_NAMES).toEqual(['sync_call', 'async_create', 'async_poll', 'resume_check', 'deliver_callback']);
  });

  it('a job without a handler is refused', () => {
    expect(jobHandlerProblems([steps])).toEqual(["no handler for job 'deliver_callback' (queue 'callbacks')"]);
  });

  it('a job with two handlers is refused', () => {
    const again = claim('SecondProcessor', 'callbacks', ['deliver_callback']);
    expect(jobHandlerProblems([steps, callbacks, again])).toEqual(["job 'deliver_callback' has 2 handlers: CallbacksProcessor, SecondProcessor"]);
  });

  it('a handler on the wrong queue, or of a job not in the list, is refused', () => {
    const wrong = claim('CallbacksProcessor', 'orders', ['deliver_callback']);
    expect(jobHandlerProblems([steps, wrong])).toEqual(["CallbacksProcessor handles 'deliver_callback' on queue 'orders', but JOBS puts it on 'callbacks'"]);
    const unknown = claim('OddProcessor', 'orders', ['send_email']);
    expect(jobHandlerProblems([steps, callbacks, unknown])).toEqual(["OddProcessor handles 'send_email', which is not in the job list (JOBS)"]);
  });

  it('the worker refuses to start (Nest init fails) when a job has no handler, and starts when each has one', async () => {
    const app = (processors: JobHandlerClaim[]) => Test.createTestingModule({ providers: [{ provide: JOB_PROCESSORS, useValue: processors }, JobHandlers] }).compile();
    const missing = await app([steps]);
    await expect(missing.init()).rejects.toThrow("The worker cannot start: no handler for job 'deliver_callback' (queue 'callbacks')");
    const complete = await app([steps, callbacks]);
    await expect(complete.init()).resolves.toBe(complete);
    await complete.close();
  });
});
