import { setImmediate as turn } from 'node:timers/promises';
import {
  currentRequestId,
  holdScope,
  outsideAnyCall,
  scopeState,
  withCallScope,
  withRequestId,
} from '@licensing/runtime';

// The request scope (runtime/core/request-scope.ts): before Node 24 its AsyncLocalStorage runs on
// async_hooks, so it is enabled only while a scope is open; every scope still reads its own id
// through every await, and nothing is open once each has ended.
const before24 = Number(process.versions.node.split('.')[0]) < 24;

afterEach(() => expect(scopeState().open).toBe(0));

it('a scope reads its own id through awaits and timers, and none is open after it', async () => {
  const seen = await withRequestId('req_a', async () => {
    await turn();
    const inner = await new Promise<string | undefined>((resolve) => setTimeout(() => resolve(currentRequestId()), 0));
    return [currentRequestId(), inner];
  });
  expect(seen).toEqual(['req_a', 'req_a']);
  await turn();
  expect(scopeState()).toEqual({ open: 0, enabled: !before24 });
  expect(currentRequestId()).toBeUndefined();
});

it('two scopes at once keep their own ids, and the storage stays on until the last one ends', async () => {
  let releaseA!: () => void;
  const gate = new Promise<void>((r) => (releaseA = r));
  const a = withRequestId('req_a', async () => {
    await gate; // resolved from outside any scope: what follows still reads a's
    return currentRequestId();
  });
  const b = withCallScope('req_b', Infinity, async () => {
    await turn();
    return currentRequestId();
  });
  expect(await b).toBe('req_b');
  await turn();
  expect(scopeState()).toEqual({ open: 1, enabled: true }); // a is still open
  releaseA();
  expect(await a).toBe('req_a');
  await turn();
  expect(scopeState()).toEqual({ open: 0, enabled: !before24 });
});

it('a held scope (an HTTP request past its first next()) stays readable until released, and a failure closes its scope too', async () => {
  const release = holdScope();
  const later = withRequestId('req_held', () => {
    // The middleware returns at once; the rest of the request runs later, still in its scope.
    return new Promise<string | undefined>((resolve) => setTimeout(() => resolve(currentRequestId()), 0));
  });
  expect(await later).toBe('req_held');
  expect(scopeState().enabled).toBe(true);
  release();
  release(); // once only
  await expect(withRequestId('req_fails', async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
  expect(() =>
    withRequestId('req_throws', () => {
      throw new Error('sync');
    }),
  ).toThrow('sync');
  await turn();
  expect(scopeState()).toEqual({ open: 0, enabled: !before24 });
});

it('work outside any call reads no scope, inside one or not, and a new scope after the storage was off works at once', async () => {
  await withRequestId('req_out', async () => {
    expect(outsideAnyCall(() => currentRequestId())).toBeUndefined();
    expect(currentRequestId()).toBe('req_out');
  });
  await turn();
  expect(outsideAnyCall(() => currentRequestId())).toBeUndefined();
  expect(await withRequestId('req_again', async () => currentRequestId())).toBe('req_again');
});
