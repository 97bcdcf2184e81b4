// MongoDB init step: one user per service, allowed only its own database
// (readWrite there, nothing elsewhere). Compose runs it from
// /docker-entrypoint-initdb.d on the first start of an empty volume, as the
// root user; Kubernetes runs it in the mongo-users Job (deploy/k8s/base/mongo-users.yaml)
// on every apply. It is idempotent: an existing user gets its password and roles reset.
// Passwords are read from the secret files make-secrets.sh writes (MONGO_SECRETS_DIR,
// default /run/secrets); each service's MONGO_URL (mongo_url_<service>) names the same user.
const fs = require('fs');
const dir = process.env.MONGO_SECRETS_DIR || '/run/secrets';
const prefix = process.env.MONGO_DB_PREFIX || 'licensing';
for (const service of ['account', 'product', 'license', 'checkout', 'webhook', 'notification']) {
  const name = `${prefix}_${service}`;
  const pwd = fs.readFileSync(`${dir}/mongo_password_${service}`, 'utf8').trim();
  const target = db.getSiblingDB(name);
  const roles = [{ role: 'readWrite', db: name }];
  if (target.getUser(service)) target.updateUser(service, { pwd, roles });
  else target.createUser({ user: service, pwd, roles });
  print(`mongo user ${service}: readWrite on ${name} only`);
}
