// All production code reads time through a Clock so tests can move it.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
