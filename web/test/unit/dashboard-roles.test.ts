import { dashboardRoleFor } from '../../src/dashboard/signed-in';

// What each dashboard request needs of the signed-in member's role: reading is everyone's; a support
// member's licence actions; a developer's other changes; an admin's settings; anyone's own password.

it.each([
  ['GET', '/dashboard/licenses?status=active', 'read_only'],
  ['GET', '/dashboard/settings', 'read_only'],
  ['POST', '/dashboard/signout', 'read_only'],
  ['POST', '/dashboard/settings/password', 'read_only'],
  ['POST', '/dashboard/settings/sessions/ses_1/end', 'read_only'],
  ['POST', '/dashboard/licenses/ABCD-EFGH/suspend', 'support'],
  ['POST', '/dashboard/licenses/ABCD-EFGH/reroll', 'support'],
  ['POST', '/dashboard/licenses/ABCD-EFGH/email', 'support'],
  ['POST', '/dashboard/licenses/ABCD-EFGH/activations/act_1/deactivate', 'support'],
  ['POST', '/dashboard/licenses/ABCD-EFGH/revoke', 'developer'],
  ['POST', '/dashboard/licenses', 'developer'],
  ['POST', '/dashboard/products', 'developer'],
  ['GET', '/dashboard/products/prod_1/releases', 'read_only'],
  ['POST', '/dashboard/products/prod_1/releases', 'developer'],
  ['POST', '/dashboard/products/prod_1/releases/rel_1/publish', 'developer'],
  ['POST', '/dashboard/products/prod_1/releases/rel_1/yank', 'developer'],
  ['POST', '/dashboard/products/prod_1/releases/rel_1/upload-grant', 'developer'],
  ['POST', '/dashboard/webhooks/we_1/rotate-secret', 'developer'],
  ['POST', '/dashboard/settings/keys', 'admin'],
  ['POST', '/dashboard/settings/keys/revoke-all', 'admin'],
  ['POST', '/dashboard/settings/support-email', 'admin'],
  ['POST', '/dashboard/members', 'admin'],
  ['POST', '/dashboard/members/mem_1/remove', 'admin'],
  ['GET', '/dashboard/members', 'admin'],
  ['GET', '/dashboard/audit?action=license.suspended', 'admin'],
])('%s %s needs %s', (method, url, role) => {
  expect(dashboardRoleFor(method, url)).toBe(role);
});
