import {
  ORIGIN_LIMITS,
  currentCall,
  decodeOrigin,
  encodeOrigin,
  idFloor,
  idFor,
  newEnvelope,
  requestOrigin,
  setRequestOrigin,
  withCallScope,
} from '../../src';

// Who made a request travels from the edge to the services as one bounded metadata value, and onto the
// events the request makes: what a service believes of it, and what it refuses to believe.

describe('a request origin', () => {
  const origin = requestOrigin({ type: 'member', id: 'usr_1', name: 'ops@example.com' }, '203.0.113.7', 'Firefox/130');

  it('round-trips through its metadata value, made once per origin', () => {
    expect(decodeOrigin(encodeOrigin(origin))).toEqual(origin);
    expect(encodeOrigin(origin)).toBe(encodeOrigin(origin));
  });

  it('keeps printable text only, each part cut to its limit (a user agent is cut, never refused)', () => {
    const long = requestOrigin(
      { type: 'api_key', id: 'key_1', name: `a\u0000b${'n'.repeat(400)}` },
      '1.2.3.4\n',
      'x'.repeat(1000),
    );
    expect(long.actor.name).toBe(`ab${'n'.repeat(ORIGIN_LIMITS.name - 2)}`);
    expect(long.ip).toBe('1.2.3.4');
    expect(long.user_agent).toHaveLength(ORIGIN_LIMITS.userAgent);
    expect(requestOrigin({ type: 'license', id: 'lic_1' })).toEqual({ actor: { type: 'license', id: 'lic_1' } });
  });

  it.each([
    ['not a buffer', '{"actor":{"type":"member","id":"u"}}'],
    ['empty', Buffer.alloc(0)],
    ['not JSON', Buffer.from('{nope')],
    ['an unknown actor type', Buffer.from('{"actor":{"type":"root","id":"u"}}')],
    ['no actor id', Buffer.from('{"actor":{"type":"member"}}')],
    ['too long', Buffer.from(JSON.stringify({ actor: { type: 'member', id: 'u' }, pad: 'x'.repeat(2000) }))],
  ])('is none when its value is %s', (_what, value) => {
    expect(decodeOrigin(value)).toBeUndefined();
  });

  it('is set on the call being served and written on the events it makes; outside a call nothing', () => {
    setRequestOrigin(origin); // no call: nothing to set
    expect(currentCall()).toBeUndefined();
    const event = withCallScope('req_1', Number.POSITIVE_INFINITY, () => {
      setRequestOrigin(origin);
      return newEnvelope('license.suspended', 'acc_1', {});
    });
    expect(event).toMatchObject({ request_id: 'req_1', origin });
    expect(newEnvelope('license.suspended', 'acc_1', {})).not.toHaveProperty('origin');
  });
});

describe('ids made from a fact', () => {
  it('are the same for the same fact, of the usual shape, and sort by their time', () => {
    const at = Date.parse('2026-05-01T12:00:00Z');
    const a = idFor('aud', at, 'evt_one');
    expect(a).toBe(idFor('aud', at, 'evt_one'));
    expect(a).not.toBe(idFor('aud', at, 'evt_two'));
    expect(a).toMatch(/^aud_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(idFor('aud', at - 1, 'evt_z') < a).toBe(true);
    expect(a < idFor('aud', at + 1, 'evt_0')).toBe(true);
  });

  it('have a floor per time: every id made at or after it is not below it', () => {
    const at = Date.parse('2026-05-01T12:00:00Z');
    expect(idFloor('aud', at) <= idFor('aud', at, 'anything')).toBe(true);
    expect(idFor('aud', at - 1, 'anything') < idFloor('aud', at)).toBe(true);
  });
});
