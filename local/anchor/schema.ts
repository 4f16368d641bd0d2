/**
 * Request bodies the local service accepts, shaped as the `anchorbrowser` SDK sends them
 * (`SessionCreateParams`, `ProfileCreateParams`). Unknown fields pass through, as with the
 * real API; fields the local service acts on are checked.
 */
import { z } from 'zod';

/** Profile names become directory names: keep them to a safe alphabet. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const profileName = z.string().regex(PROFILE_NAME, 'must be 1-128 of [A-Za-z0-9._-], starting alphanumeric');
const minutes = z.number().positive().finite();

export const sessionCreateSchema = z.looseObject({
  browser: z
    .looseObject({
      profile: z
        .looseObject({
          name: profileName.optional(),
          persist: z.boolean().optional(),
        })
        .optional(),
      viewport: z
        .looseObject({
          width: z.number().int().positive().max(10_000).optional(),
          height: z.number().int().positive().max(10_000).optional(),
        })
        .optional(),
    })
    .optional(),
  identities: z.array(z.looseObject({ id: z.string().min(1).optional() })).optional(),
  /** Volumes to mount: read-write (downloads land in its `downloads/`) or read-only. */
  volumes: z
    .array(z.looseObject({ id: z.string().min(1), read_only: z.boolean().optional() }))
    .max(10)
    .optional(),
  integrations: z.array(z.unknown()).optional(),
  session: z
    .looseObject({
      initial_url: z.string().url().optional(),
      timeout: z
        .looseObject({
          idle_timeout: minutes.optional(),
          max_duration: minutes.optional(),
        })
        .optional(),
      tags: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]).optional(),
    })
    .optional(),
});
export type SessionCreateBody = z.infer<typeof sessionCreateSchema>;

export const profileCreateSchema = z.looseObject({
  name: profileName,
  description: z.string().max(1_000).optional(),
  session_id: z.string().min(1).optional(),
  source: z.literal('session').optional(),
  dedicated_sticky_ip: z.boolean().optional(),
});
export type ProfileCreateBody = z.infer<typeof profileCreateSchema>;

/** One line naming each bad field, for a 400 that tells the caller what to fix. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : 'body'}: ${i.message}`).join('; ');
}
