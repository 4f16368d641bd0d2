import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';
import { CreateWebhookBodySchema } from './routes.ts';

const Webhook = z
  .object({
    webhookId: z.string(),
    url: z.string(),
    description: z.string().optional(),
    events: z.array(z.string()),
    createdAt: z.string(),
    revokedAt: z.string().optional(),
  })
  .meta({ id: 'Webhook' });

const Delivery = z
  .object({
    deliveryId: z.string(),
    webhookId: z.string(),
    event: z.string(),
    jobId: z.string(),
    step: z.string(),
    outcome: z.enum(['delivered', 'failed']),
    attempts: z.array(
      z.object({ at: z.string(), status: z.number().int(), ms: z.number(), error: z.string().optional() }),
    ),
    at: z.string(),
  })
  .meta({ id: 'WebhookDelivery' });

/** The notifications paths of the OpenAPI document. */
export const registerNotificationPaths: RegisterPaths = (r, { security, json, error, body, common }) => {
  const admin = { 403: error('The key lacks the admin role.'), ...common };
  const params = { params: z.object({ webhookId: z.string() }) };
  r.registerPath({
    method: 'post',
    path: '/notifications/webhooks',
    summary: 'Register a webhook told when a job waits for a person (role admin); its secret is shown once',
    description:
      'Each POST carries `Belay-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, `Belay-Event` and `Belay-Delivery`. The body has `text` (a Slack-compatible message with the console link), `job` and `links.console`. Failed deliveries are retried with backoff and logged.',
    security,
    request: { body: body(CreateWebhookBodySchema) },
    responses: {
      201: json(z.object({ webhook: Webhook, secret: z.string() }), 'Registered.'),
      400: error('Malformed request.'),
      422: error(
        'A URL Belay will not call (not https, or a private address), or webhooks are not configured.',
      ),
      ...admin,
    },
  });
  r.registerPath({
    method: 'get',
    path: '/notifications/webhooks',
    summary: "The tenant's webhooks (role admin)",
    security,
    responses: { 200: json(z.object({ webhooks: z.array(Webhook) }), 'The webhooks.'), ...admin },
  });
  r.registerPath({
    method: 'delete',
    path: '/notifications/webhooks/{webhookId}',
    summary: 'Stop a webhook (role admin)',
    security,
    request: params,
    responses: {
      200: json(z.object({ webhook: Webhook }), 'Stopped.'),
      404: error('No such webhook.'),
      ...admin,
    },
  });
  r.registerPath({
    method: 'get',
    path: '/notifications/webhooks/{webhookId}/deliveries',
    summary: "A webhook's delivery log, newest first (role admin)",
    security,
    request: params,
    responses: {
      200: json(z.object({ deliveries: z.array(Delivery) }), 'The deliveries.'),
      404: error('No such webhook.'),
      ...admin,
    },
  });
};
