import { z } from 'zod';
import { WebhookNotFoundError, WebhookUrlError } from '../../notifications/errors.ts';
import { webhookSecret } from '../../notifications/signing.ts';
import { checkWebhookUrl } from '../../notifications/store.ts';
import { BadRequestError, NotFoundError, UnprocessableError } from '../errors.ts';
import { bodyOf, ok, type Route, type RouteRequest } from '../route.ts';
import { fieldIssues } from '../schemas.ts';

/**
 * Outgoing webhooks (role admin): a tenant registers a URL that is told, signed, whenever one of
 * its jobs waits for a person (approval, one-time code, review), with a link to the console
 * page of the decision; each delivery and its attempts are logged.
 */

export const CreateWebhookBodySchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .meta({ description: 'https URL that receives POSTs (a Slack incoming webhook works as it is).' }),
    description: z.string().trim().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'CreateWebhookRequest' });

function hookParam(req: RouteRequest): string {
  return req.params.webhookId ?? '';
}

async function known<T>(webhookId: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof WebhookNotFoundError)
      throw new NotFoundError(`no webhook ${webhookId} for this tenant`, { cause: err });
    throw err;
  }
}

export const NOTIFICATION_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/notifications/webhooks',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const parsed = CreateWebhookBodySchema.safeParse(bodyOf(req));
      if (!parsed.success) {
        throw new BadRequestError('invalid_request', 'the webhook is not valid: see details', {
          details: fieldIssues(parsed.error),
        });
      }
      const { signingKey, allowLoopback, webhooks } = req.deps.notifications;
      if (!signingKey) {
        throw new UnprocessableError(
          'webhooks_not_configured',
          'this deployment has no webhook signing key (BELAY_WEBHOOK_SIGNING_KEY)',
        );
      }
      let url: string;
      try {
        url = checkWebhookUrl(parsed.data.url, allowLoopback);
      } catch (err) {
        if (!(err instanceof WebhookUrlError)) throw err;
        throw new UnprocessableError('invalid_webhook_url', err.message, {
          details: [{ field: 'url', message: err.message }],
        });
      }
      const webhook = await webhooks.create(req.principal.tenantId, {
        url,
        ...(parsed.data.description ? { description: parsed.data.description } : {}),
      });
      // Shown once: the receiver verifies `Belay-Signature` with it.
      return ok(
        { webhook, secret: webhookSecret(signingKey, req.principal.tenantId, webhook.webhookId) },
        201,
      );
    },
  },
  {
    method: 'GET',
    path: '/notifications/webhooks',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      return ok({ webhooks: await req.deps.notifications.webhooks.list(req.principal.tenantId) });
    },
  },
  {
    method: 'DELETE',
    path: '/notifications/webhooks/{webhookId}',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const id = hookParam(req);
      return ok({
        webhook: await known(id, () => req.deps.notifications.webhooks.revoke(req.principal.tenantId, id)),
      });
    },
  },
  {
    method: 'GET',
    path: '/notifications/webhooks/{webhookId}/deliveries',
    auth: true,
    roles: ['admin'],
    async handle(req) {
      const id = hookParam(req);
      const { webhooks } = req.deps.notifications;
      await known(id, () => webhooks.get(req.principal.tenantId, id));
      return ok({ deliveries: await webhooks.deliveries(req.principal.tenantId, id, 50) });
    },
  },
];
