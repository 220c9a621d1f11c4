import type { Fault } from '@cardpull/sim-contract';
import { latencyOf } from '../faults/responder.service';
import type { PullRequestRecord, SimWorld } from '../state/world';

/**
 * read_lag: whether the read copy that answers does not have this pull request yet. The lag runs from its
 * creation, or (lag_from 'already_used') from the first 422 "already used" the partner answered for its ID:
 * never for an ID that was not repeated.
 */
export function lagging(record: PullRequestRecord, fault: Fault): boolean {
  const from = fault.lag_from === 'already_used' ? record.already_used_at : Date.parse(record.created_at);
  return from !== null && Date.now() - from < latencyOf(fault);
}

/**
 * other_request_id: the pull request an answer about `askedId` shows instead of `asked`, or null when the
 * reading has nothing to show (relabeled without the asked pull request; another with no other one).
 *  - relabeled: the asked pull request as it is, its request_id `shown_request_id` or `<asked>-other`;
 *  - another: the pull request of `shown_request_id` if the partner has it, else the latest created other
 *    than the asked, whole (its own id, status, card); with no other one, as relabeled.
 */
export function shownInstead(world: SimWorld, askedId: string, asked: PullRequestRecord | undefined, fault: Fault): PullRequestRecord | null {
  if (fault.shown === 'another') {
    const named = fault.shown_request_id !== undefined && fault.shown_request_id !== askedId ? world.pullRequests.get(fault.shown_request_id) : undefined;
    const other = named ?? world.latestPullRequestOtherThan(askedId);
    if (other) return other;
  }
  if (!asked) return null;
  return { ...asked, request_id: fault.shown_request_id ?? `${askedId}-other` };
}
