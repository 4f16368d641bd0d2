/**
 * Request bodies of the local service's managed-authentication routes, shaped as the
 * `anchorbrowser` SDK sends them (`ApplicationCreateParams`, `AuthFlowCreateParams`,
 * `IdentityCreateParams`, `IdentityUpdateParams`, `ApplicationCreateIdentityTokenParams`).
 */
import { z } from 'zod';

const httpUrl = z.url({ protocol: /^https?$/ });

export const applicationCreateSchema = z.looseObject({
  source: httpUrl,
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(2_000).optional(),
});

export const authFlowCreateSchema = z.looseObject({
  name: z.string().min(1).max(200),
  methods: z.array(z.enum(['username_password', 'authenticator', 'custom'])).min(1),
  custom_fields: z.array(z.looseObject({ name: z.string().min(1).max(200) })).optional(),
  description: z.string().max(2_000).optional(),
  is_recommended: z.boolean().optional(),
});

export const credentialSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('username_password'),
    username: z.string().max(320).optional(),
    password: z.string().max(1_024).optional(),
  }),
  z.looseObject({
    type: z.literal('authenticator'),
    secret: z.string().max(256).optional(),
    otp: z.string().max(16).optional(),
  }),
  z.looseObject({
    type: z.literal('custom'),
    fields: z.array(z.object({ name: z.string().max(200), value: z.string().max(1_024) })).optional(),
  }),
]);

export const identityCreateSchema = z.looseObject({
  source: httpUrl,
  credentials: z.array(credentialSchema).max(10).optional(),
  name: z.string().min(1).max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  applicationName: z.string().max(200).optional(),
  applicationDescription: z.string().max(2_000).optional(),
});

export const identityUpdateSchema = z.looseObject({
  name: z.string().min(1).max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  credentials: z.array(credentialSchema).max(10).optional(),
});

/**
 * Anchor refuses a callback that is not HTTPS. Loopback is allowed too, so a local stack
 * (whose API listens on http://127.0.0.1) can be called back.
 */
export const tokenCreateSchema = z.looseObject({
  callbackUrl: httpUrl.refine((u) => {
    const url = new URL(u);
    return url.protocol === 'https:' || ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  }, 'must be an https URL (or a loopback http URL)'),
});
