import { z } from 'zod';

export const WebhookAckSchema = z
  .object({ received: z.literal(true), eventId: z.string(), action: z.string() })
  .meta({ id: 'WebhookAck' });
