import { decodeCursor, encodeCursor } from './list-movements.js';

describe('movement cursors', () => {
  it('round-trip (created_at with microseconds, id) and stay URL-safe', () => {
    const c = { createdAt: '2026-11-21T10:00:00.123456Z', id: '0b7e1c9a-0000-4000-8000-000000000001' };
    const s = encodeCursor(c);
    expect(s).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(s)).toEqual(c);
  });
  it('refuse anything this service did not issue', () => {
    expect(decodeCursor('')).toBeUndefined();
    expect(decodeCursor('%%%')).toBeUndefined();
    expect(decodeCursor(Buffer.from('["x","y"]').toString('base64url'))).toBeUndefined();
    expect(decodeCursor(Buffer.from('{"a":1}').toString('base64url'))).toBeUndefined();
    expect(
      decodeCursor(Buffer.from("['2026-11-21T10:00:00.123456Z','0b7e1c9a-0000-4000-8000-000000000001'; drop table x]").toString('base64url')),
    ).toBeUndefined();
  });
});
