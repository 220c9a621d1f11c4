import type { AttemptState } from '@cardpull/db';

// What a partner answer taught about an attempt, and its SET clauses: written by a step's notes
// (StepsRepository.note) and inside the transitions that move an order (TransitionsRepository).

/**
 * Changes to an attempt (what a partner answer taught about it). `unknownSince`: 'start' starts the
 * unknown-outcome window now unless it runs, 'restart' starts it again (an operator's re-drive), a Date
 * is its start when none was recorded (an interrupted call counts from when it was sent).
 * `notFoundSince`: 'start' the first 404 of a run (kept if one runs), 'clear' the partner showed it.
 */
export interface AttemptNote {
  partnerStatus?: string | null;
  error?: { code: string; message: string } | null;
  state?: AttemptState;
  unknownSince?: 'start' | 'restart' | Date;
  notFoundSince?: 'start' | 'clear';
  /** An operator's declaration that the ID is dead (invariant 2): who; when is now. Only OperatorActions sets it. */
  declaredDeadBy?: string;
}

/**
 * The note's unknown-outcome window: given, or started ('start', kept if one runs) by a move to `unknown`.
 * An ID of unknown outcome always has its window (the ledger holds its order's money in in_doubt from the
 * same move, and the money-in-doubt figures count it by the window), whichever writer moves it there.
 */
export function unknownWindow(note: Pick<AttemptNote, 'state' | 'unknownSince'>): AttemptNote['unknownSince'] {
  return note.unknownSince ?? (note.state === 'unknown' ? 'start' : undefined);
}

/** SET clauses of an attempt note, times by the database's clock. */
export function noteSets(note: AttemptNote, params: unknown[]): { sets: string; params: unknown[] } {
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const sets = ['updated_at = now()'];
  if (note.state) sets.push(`state = ${p(note.state)}::"AttemptState"`);
  if (note.partnerStatus !== undefined) sets.push(`partner_status = ${p(note.partnerStatus)}`);
  if (note.error !== undefined) sets.push(`error_code = ${p(note.error?.code ?? null)}`, `error_message = ${p(note.error?.message ?? null)}`);
  const unknownSince = unknownWindow(note);
  if (unknownSince === 'start') sets.push('unknown_since = COALESCE(unknown_since, now())');
  else if (unknownSince === 'restart') sets.push('unknown_since = now()');
  else if (unknownSince instanceof Date) sets.push(`unknown_since = COALESCE(unknown_since, ${p(unknownSince)}::timestamptz)`);
  if (note.notFoundSince === 'start') sets.push('not_found_since = COALESCE(not_found_since, now())');
  else if (note.notFoundSince === 'clear') sets.push('not_found_since = NULL');
  if (note.declaredDeadBy) sets.push('declared_dead_at = now()', `declared_dead_by = ${p(note.declaredDeadBy)}`);
  return { sets: sets.join(', '), params };
}
