import type { Queue } from 'bullmq';

/** Ids of every job of `queue` that will still run: waiting (also while paused), delayed, active or prioritized. */
export async function liveJobIds(queue: Queue): Promise<Set<string>> {
  return new Set(await queue.getRanges(['active', 'wait', 'delayed', 'prioritized', 'waiting-children'], 0, -1));
}

/** Removals sent to Redis together (each is one script call; sent concurrently they share round trips). */
const REMOVE_CHUNK = 500;

/**
 * Removes what is left of jobs that are not live (a hash whose list entry was lost, a finished job kept):
 * BullMQ would take a re-add under the same id for a duplicate and drop it. After a lost Redis these are
 * thousands of ids, so they go concurrently, a chunk at a time, not one round trip each. A job that cannot
 * be removed (locked by a worker: it is running) is left alone.
 */
export async function removeLeftovers(queue: Queue, jobIds: string[]): Promise<void> {
  for (let i = 0; i < jobIds.length; i += REMOVE_CHUNK) {
    await Promise.all(jobIds.slice(i, i + REMOVE_CHUNK).map((id) => queue.remove(id).catch(() => 0)));
  }
}
