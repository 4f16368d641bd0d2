import { BelayError } from '../errors.ts';

/** A webhook URL Belay will not call (not https, or an address inside the deployment's network). */
export class WebhookUrlError extends BelayError {
  constructor(message: string) {
    super('WebhookUrlError', 'invalid-webhook-url', message);
  }
}

/** No webhook with this id for this tenant. */
export class WebhookNotFoundError extends BelayError {
  constructor(webhookId: string) {
    super('WebhookNotFoundError', 'webhook-not-found', `no webhook ${webhookId} for this tenant`);
  }
}
