/**
 * The soak's judgement, apart from the run: the figures it gathered in, the promises they keep or
 * break out. Pure, so each threshold has a test (test/bench/soak-verdict.test.ts).
 */

export interface Sample {
  /** ms since the start of the run. */
  readonly at: number;
  readonly value: number;
}

export interface Trend {
  /** Length of the second half, ms. */
  readonly secondHalfMs: number;
  readonly start: number;
  readonly peak: number;
  readonly end: number;
  /** Least-squares slope over the second half of the run, per minute. */
  readonly slopePerMinute: number;
  /** Its standard error, per minute. */
  readonly slopeErrorPerMinute: number;
  /** The fitted rise over the second half (slope times its length). */
  readonly secondHalfRise: number;
  /** The mean over the second half. */
  readonly secondHalfMean: number;
}

/** Start, peak, end, and the line fitted through the second half of the samples. */
export function trendOf(samples: readonly Sample[]): Trend {
  if (samples.length === 0) throw new RangeError('no samples');
  const first = samples[0]!.at;
  const last = samples.at(-1)!.at;
  const half = samples.filter((s) => s.at >= first + (last - first) / 2);
  const n = half.length;
  const meanT = half.reduce((sum, s) => sum + s.at, 0) / n;
  const meanV = half.reduce((sum, s) => sum + s.value, 0) / n;
  const sxx = half.reduce((sum, s) => sum + (s.at - meanT) ** 2, 0);
  const slope = sxx === 0 ? 0 : half.reduce((sum, s) => sum + (s.at - meanT) * (s.value - meanV), 0) / sxx;
  const residuals = half.reduce((sum, s) => sum + (s.value - meanV - slope * (s.at - meanT)) ** 2, 0);
  const error = sxx === 0 || n < 3 ? Number.POSITIVE_INFINITY : Math.sqrt(residuals / (n - 2) / sxx);
  return {
    secondHalfMs: half.at(-1)!.at - half[0]!.at,
    start: samples[0]!.value,
    peak: Math.max(...samples.map((s) => s.value)),
    end: samples.at(-1)!.value,
    slopePerMinute: slope * 60_000,
    slopeErrorPerMinute: error * 60_000,
    secondHalfRise: slope * (half.at(-1)!.at - half[0]!.at),
    secondHalfMean: meanV,
  };
}

export interface Limits {
  /** What a request may take past REQUEST_TIMEOUT_MS before it counts as past its deadline. */
  readonly deadlineMarginMs: number;
  /** A rise of RSS over the second half below this is noise, whatever its slope (MB). */
  readonly memoryNoiseMB: number;
  /** ... and below this share of the second half's mean RSS. */
  readonly memoryNoiseShare: number;
  /**
   * A second half shorter than this says nothing of a leak: the heap is still growing to where
   * its collector settles (minutes under this load). The slope is reported, not judged.
   */
  readonly memoryJudgedFromMs: number;
}

export const DEFAULT_LIMITS: Limits = { deadlineMarginMs: 5000, memoryNoiseMB: 16, memoryNoiseShare: 0.1, memoryJudgedFromMs: 150_000 };

export interface Figures {
  /** Answers by HTTP status. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Errors by extensions.code. */
  readonly codes: Readonly<Record<string, number>>;
  /** Errors without extensions.code, and answers that were not GraphQL at all. */
  readonly codeless: number;
  /** Live records: deliveries, those past the first of a record, records never delivered, and records of another filter. */
  readonly live: { readonly delivered: number; readonly duplicated: number; readonly missing: number; readonly foreign: number };
  readonly rssMB: Trend;
  readonly requestTimeoutMs: number;
  readonly longestRequestMs: number;
  /** Requests that got no answer at all (connection refused or reset, client timeout). */
  readonly unanswered: number;
}

/** Whether the memory rose over a long enough second half by more than noise, and steadily (beyond twice its error). */
export function memoryRises(trend: Trend, limits: Limits = DEFAULT_LIMITS): boolean {
  if (trend.secondHalfMs < limits.memoryJudgedFromMs) return false;
  const noise = Math.max(limits.memoryNoiseMB, limits.memoryNoiseShare * trend.secondHalfMean);
  return trend.slopePerMinute - 2 * trend.slopeErrorPerMinute > 0 && trend.secondHalfRise > noise;
}

/** The promises the figures break, in words; none: the soak passes. */
export function brokenPromises(figures: Figures, limits: Limits = DEFAULT_LIMITS): string[] {
  const broken: string[] = [];
  const serverErrors = Object.entries(figures.statuses)
    .filter(([status]) => Number(status) >= 500)
    .reduce((sum, [, count]) => sum + count, 0);
  if (serverErrors > 0) broken.push(`${serverErrors} answers with a 5xx status`);
  const internal = figures.codes['INTERNAL_SERVER_ERROR'] ?? 0;
  if (internal > 0) broken.push(`${internal} INTERNAL_SERVER_ERROR errors`);
  if (figures.codeless > 0) broken.push(`${figures.codeless} errors without a code`);
  if (figures.unanswered > 0) broken.push(`${figures.unanswered} requests without an answer`);
  if (figures.live.duplicated > 0) broken.push(`${figures.live.duplicated} live records delivered twice`);
  if (figures.live.missing > 0) broken.push(`${figures.live.missing} live records never delivered`);
  if (figures.live.foreign > 0) broken.push(`${figures.live.foreign} live records outside their subscription's filter`);
  if (figures.live.delivered === 0) broken.push('no live record delivered');
  if (memoryRises(figures.rssMB, limits)) {
    broken.push(
      `RSS rose ${figures.rssMB.secondHalfRise.toFixed(1)} MB over the second half ` +
        `(${figures.rssMB.slopePerMinute.toFixed(2)} ± ${figures.rssMB.slopeErrorPerMinute.toFixed(2)} MB/min)`,
    );
  }
  const deadline = figures.requestTimeoutMs + limits.deadlineMarginMs;
  if (figures.longestRequestMs > deadline) {
    broken.push(`a request took ${(figures.longestRequestMs / 1000).toFixed(1)} s, past its ${figures.requestTimeoutMs / 1000} s deadline and ${limits.deadlineMarginMs / 1000} s of margin`);
  }
  return broken;
}
