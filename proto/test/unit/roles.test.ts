import { API_KEY_ROLES, MEMBER_ROLES, mayGrant, roleCovers, roleOfScope } from '../../rules';

describe('roles', () => {
  it('each role may do what the roles below it may, and nothing above', () => {
    expect(MEMBER_ROLES).toEqual(['owner', 'admin', 'developer', 'support', 'read_only']);
    for (const [i, role] of MEMBER_ROLES.entries())
      for (const [j, needed] of MEMBER_ROLES.entries())
        expect([role, needed, roleCovers(role, needed)]).toEqual([role, needed, i <= j]);
  });

  it('a validate key and an unknown role cover no operation of the vendor API', () => {
    for (const needed of MEMBER_ROLES) {
      expect(roleCovers('validate', needed)).toBe(false);
      expect(roleCovers('superuser', needed)).toBe(false);
      expect(roleCovers('', needed)).toBe(false);
    }
  });

  it('a key or a member is never given a role above its granter’s; owner is no API key role', () => {
    expect(API_KEY_ROLES).not.toContain('owner');
    expect(mayGrant('developer', 'developer')).toBe(true);
    expect(mayGrant('developer', 'support')).toBe(true);
    expect(mayGrant('developer', 'validate')).toBe(true);
    expect(mayGrant('developer', 'admin')).toBe(false);
    expect(mayGrant('support', 'developer')).toBe(false);
    expect(mayGrant('admin', 'owner')).toBe(false);
    expect(mayGrant('owner', 'admin')).toBe(true);
    expect(mayGrant('admin', 'root')).toBe(false);
  });

  it('a key made before roles has its scope’s: full is admin, validate stays validate', () => {
    expect(roleOfScope('full')).toBe('admin');
    expect(roleOfScope('validate')).toBe('validate');
  });
});
