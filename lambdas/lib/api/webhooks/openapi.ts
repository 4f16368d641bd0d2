import { z } from 'zod';
import type { RegisterPaths } from '../openapi-kit.ts';
import { AnchorEventSchema } from './anchor.ts';
import { WebhookAckSchema } from './schemas.ts';

/** The webhook paths of the OpenAPI document. */
export const registerWebhookPaths: RegisterPaths = (r, { json, error, body }) => {
  r.registerPath({
    method: 'post',
    path: '/webhooks/anchor',
    summary: "Anchor's webhook deliveries (signed with HMAC-SHA256)",
    request: {
      headers: z.object({ 'Anchor-Signature': z.string(), 'Anchor-Timestamp': z.string() }),
      body: body(AnchorEventSchema),
    },
    responses: {
      200: json(WebhookAckSchema, 'Received.'),
      400: error('Not an Anchor event.'),
      401: error('Missing, stale or wrong signature.'),
      409: error('The event was already received (replay).'),
      413: error('The body is larger than 256 KiB.'),
    },
  });
};
