/**
 * A numeric variable that is not a whole number, or is one outside its range, is refused with one
 * message that names the range: "-5" is a whole number, so "must be a whole number" alone misleads.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/lib/config.js';
import { problemsOf } from './helpers/config-problems.js';

const GiB = 1024 ** 3;
const RANGES: [name: string, min: number, max: number][] = [
  ['PORT', 0, 65535],
  ['UPSTREAM_TIMEOUT_MS', 1, 600_000],
  ['UPSTREAM_MAX_CONNECTIONS', 1, 1024],
  ['UPSTREAM_MAX_BODY_BYTES', 64 * 1024, 256 * 1024 * 1024],
  ['UPSTREAM_MAX_BYTES_IN_FLIGHT', 64 * 1024, 16 * GiB],
  ['LARGE_OPERATION_CONCURRENCY', 1, 64],
  ['SHUTDOWN_GRACE_MS', 0, 600_000],
  ['MAX_REQUEST_BYTES', 1024, 64 * 1024 * 1024],
  ['MAX_CONNECTIONS', 1, 1_000_000],
  ['REQUEST_TIMEOUT_MS', 100, 600_000],
  ['MAX_REQUEST_BYTES_IN_FLIGHT', 1024, 16 * GiB],
  ['AUDIT_CACHE_MAX_BYTES', 0, 16 * GiB],
  ['AUDIT_CACHE_SETTLE_MS', 0, 86_400_000],
  ['SHUTDOWN_DELAY_MS', 0, 600_000],
  ['SIMULATOR_PORT', 0, 65535],
  ['AUDIT_LIVE_POLL_MS', 10, 3_600_000],
  ['AUDIT_LIVE_GIVE_UP_MS', 0, 86_400_000],
  ['AUDIT_LIVE_MAX_SUBSCRIPTIONS', 0, 1_000_000],
  ['AUDIT_LIVE_MAX_SUBSCRIPTIONS_PER_CALLER', 1, 1_000_000],
  ['AUDIT_LIVE_MAX_FILTERS', 1, 100_000],
  ['DEMO_EVENT_INTERVAL_MS', 0, 3_600_000],
];

/** The problems loadConfig reports for `name` alone (cross-variable rules aside). */
function problemsAbout(name: string, value: string): string[] {
  try {
    loadConfig({ [name]: value });
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems.filter((problem) => problem.startsWith(`${name}: must be a whole number`));
  }
}

it('UPSTREAM_TIMEOUT_MS=-5 says which values are allowed', () => {
  expect(problemsOf({ UPSTREAM_TIMEOUT_MS: '-5' })).toEqual(['UPSTREAM_TIMEOUT_MS: must be a whole number from 1 to 600000']);
});

describe.each(RANGES)('%s', (name, min, max) => {
  const message = `${name}: must be a whole number from ${min} to ${max}`;

  it.each(['-5', '1.5', 'ten', '0x10', String(min - 1), String(max + 1), '99999999999999999999'])(
    'refuses %s naming the range',
    (value) => {
      if (value === String(min - 1) && min === 0) value = '-1';
      expect(problemsAbout(name, value)).toEqual([message]);
    },
  );

  it('accepts both ends of the range', () => {
    expect(problemsAbout(name, String(min))).toEqual([]);
    expect(problemsAbout(name, String(max))).toEqual([]);
  });
});
