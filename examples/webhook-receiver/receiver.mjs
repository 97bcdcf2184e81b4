// A webhook receiver for your own machine (README: "A webhook on your machine").
//   WEBHOOK_SECRET=whsec_… node examples/webhook-receiver/receiver.mjs   [PORT=4242]
// Prints one line per event: its type, id and whether the signature checks out. Answers 2xx only to
// a valid signature, as a real receiver must (anything else makes the service retry, then give up).
import { createServer } from 'node:http';
import { verifyWebhook } from '@licensing/client';

const port = Number(process.env.PORT ?? 4242);
const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_')) {
  console.error('Set WEBHOOK_SECRET to the secret POST /api/v1/webhooks answered (whsec_…).');
  process.exit(2);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(chunks);
    const check = await verifyWebhook(body, req.headers, secret);
    if (!check.valid) {
      console.log(`refused ${req.method} ${req.url}: ${check.reason}`);
      res.writeHead(400).end();
      return;
    }
    const event = JSON.parse(body.toString('utf8'));
    console.log(`${event.type} ${event.id} (signature valid)`);
    res.writeHead(204).end();
  });
});
server.listen(port, '127.0.0.1', () => console.log(`Receiving webhooks at http://127.0.0.1:${port}/webhooks`));
