import { z } from 'zod';
import { ROLES } from '../../auth/api-keys.ts';

/** Schemas of the API-key routes: a tenant's admin manages the tenant's own keys. */

export const CreateKeyBodySchema = z
  .object({
    roles: z.array(z.enum(ROLES)).min(1).max(3).meta({ description: 'The roles of the new key.' }),
    label: z.string().trim().min(1).max(100).optional().meta({ description: 'What the key is for.' }),
  })
  .strict()
  .meta({ id: 'CreateKeyRequest' });

export const KeyViewSchema = z
  .object({
    keyId: z.string(),
    roles: z.array(z.enum(ROLES)),
    label: z.string().optional(),
    createdAt: z.string(),
    revokedAt: z.string().optional(),
  })
  .meta({ id: 'ApiKey' });

export const CreatedKeySchema = z
  .object({
    key: KeyViewSchema,
    apiKey: z.string().meta({ description: 'The key itself: shown only in this response, never stored.' }),
  })
  .meta({ id: 'CreatedApiKey' });

export const KeyListSchema = z.object({ keys: z.array(KeyViewSchema) }).meta({ id: 'ApiKeyList' });
