/** How many recent answers the estimate is the median of. */
export const PARTNER_CLOCK_SAMPLES = 15;

/**
 * A Date header has a 1 s resolution: it says the partner's time rounded down to the second, so the
 * partner's clock was on average half a second past it. Added to every reading to centre it.
 */
const DATE_RESOLUTION_BIAS_MS = 500;

/**
 * The partner's clock as its answers show it: the offset (partner's time minus ours, in ms) read from the
 * `Date` header of each answer against our clock when the answer arrived, estimated as the median of the
 * last PARTNER_CLOCK_SAMPLES readings (one answer held up in a queue or a proxy's own Date does not move
 * it). Requests are signed with `now()`, our clock plus the estimate, so the partner checks our Timestamp
 * against its own time. Without any answer yet (or answers without a Date), the offset is 0: our own clock.
 * Its error is about the header's resolution (±0.5 s) plus the time the answer took to reach us.
 */
export class PartnerClock {
  /** The readings in the order they came (the oldest leaves first)... */
  private readonly samples: number[] = [];
  /** ...and the same readings kept sorted, for the median: a reading moves it in place, with no sort per answer. */
  private readonly sorted: number[] = [];
  private estimate = 0;
  /** The last Date header read and what it parsed to: it changes once a second, answers come hundreds a second. */
  private lastDate: string | null = null;
  private lastDateAt = Number.NaN;

  constructor(
    /** Our clock (ms since the epoch). */
    private readonly ourNow: () => number = Date.now,
    private readonly size = PARTNER_CLOCK_SAMPLES,
  ) {}

  /** The partner's time by our clock and the estimate: what requests are signed with. */
  readonly now = (): number => this.ourNow() + this.estimate;

  /** The current estimate of the partner's clock minus ours, in ms (0 until an answer carried a Date). */
  offsetMs(): number {
    return this.estimate;
  }

  /** How many answers the estimate rests on. */
  sampleCount(): number {
    return this.samples.length;
  }

  /**
   * The offset one answer shows: its Date header against our clock when it arrived (`receivedAt`);
   * undefined when it has no Date or one that does not read as an HTTP date.
   */
  reading(date: unknown, receivedAt: number = this.ourNow()): number | undefined {
    const value = Array.isArray(date) ? date[0] : date;
    // An HTTP date names its weekday and month; Date.parse alone would read "5" as a year.
    if (typeof value !== 'string') return undefined;
    if (value !== this.lastDate) {
      this.lastDate = value;
      this.lastDateAt = /[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
    }
    const at = this.lastDateAt;
    return Number.isNaN(at) ? undefined : at + DATE_RESOLUTION_BIAS_MS - receivedAt;
  }

  /** Adds one answer's reading to the estimate (nothing when it had no readable Date); returns the reading. */
  observe(date: unknown, receivedAt: number = this.ourNow()): number | undefined {
    const offset = this.reading(date, receivedAt);
    if (offset === undefined) return undefined;
    this.samples.push(offset);
    this.sorted.splice(sortedIndex(this.sorted, offset), 0, offset);
    if (this.samples.length > this.size) this.sorted.splice(sortedIndex(this.sorted, this.samples.shift()!), 1);
    this.estimate = median(this.sorted);
    return offset;
  }

  /**
   * Starts again from one reading: the partner refused a signature made with the estimate, and its Date
   * shows the estimate is wrong (its clock jumped, or ours did). The older readings no longer hold.
   */
  restartFrom(offsetMs: number): void {
    this.samples.splice(0, this.samples.length, offsetMs);
    this.sorted.splice(0, this.sorted.length, offsetMs);
    this.estimate = offsetMs;
  }
}

/** The first index of `sorted` (ascending) whose value is `value` or more: where `value` goes, or is. */
function sortedIndex(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The median of values already sorted (ascending). */
function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}
