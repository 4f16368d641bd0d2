import { rawBody } from '../body.ts';
import { ANY_ROLE, ok, type Route } from '../route.ts';
import { handleAnchorWebhook } from './anchor.ts';

/** The webhook routes: signed deliveries from the browser provider (no API key). */
export const WEBHOOK_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/webhooks/anchor',
    auth: false,
    roles: ANY_ROLE,
    async handle(req) {
      const raw = rawBody(req.event, req.deps.maxBodyBytes);
      return ok(await handleAnchorWebhook(req.deps, { headers: req.event.headers, rawBody: raw }));
    },
  },
];
