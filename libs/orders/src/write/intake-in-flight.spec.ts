import type { Pool } from 'pg';
import { intakesInFlight } from './intake.repository';
import { stepStatementSlots } from './step-batch';

const pool = (max: number | undefined) => ({ options: { max } }) as unknown as Pick<Pool, 'options'>;

describe('intake statements at once (intakesInFlight)', () => {
  it('all of the pool but two connections, kept for reads and replays; at least one; a pool without a size is the pg default of 10', () => {
    expect([pool(10), pool(20), pool(3), pool(2), pool(1), pool(undefined)].map(intakesInFlight)).toEqual([8, 18, 1, 1, 1, 8]);
  });
});

describe('take (and card-store) statements at once (stepStatementSlots)', () => {
  it('half of what the intake may use, at least one', () => {
    expect([pool(10), pool(20), pool(3), pool(2), pool(1), pool(undefined)].map(stepStatementSlots)).toEqual([4, 9, 1, 1, 1, 4]);
  });
});
