/** The rejection of `withTimeout` when the time ran out (tell it apart from the work's own failure). */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * Settles as `work` does, or rejects with a TimeoutError after `ms`. The timer is cleared when `work`
 * settles and never keeps the process alive; a late rejection of `work` is not left unhandled.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, message = `no answer within ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
    timer.unref();
  });
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
