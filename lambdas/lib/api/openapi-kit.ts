import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import { ErrorBodySchema } from './schemas.ts';

/** What each use case's part of the OpenAPI document is written with (`openapi.ts` assembles them). */
export interface OpenApiKit {
  /** The bearer API key requirement of an authenticated route. */
  security: Record<string, string[]>[];
  json(schema: z.ZodType, description: string): ResponseConfig;
  error(description: string): ResponseConfig;
  body(schema: z.ZodType): { required: true; content: { 'application/json': { schema: z.ZodType } } };
  /** Errors every authenticated route can answer (401, 429). */
  common: Record<number, ResponseConfig>;
}

/** A use case's paths, registered on the document's registry. */
export type RegisterPaths = (r: OpenAPIRegistry, kit: OpenApiKit) => void;

export function openApiKit(r: OpenAPIRegistry): OpenApiKit {
  const bearer = r.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'A Belay API key (blk_...), bound to one tenant and its roles.',
  });
  const json = (schema: z.ZodType, description: string): ResponseConfig => ({
    description,
    content: { 'application/json': { schema } },
  });
  const error = (description: string): ResponseConfig => json(ErrorBodySchema, description);
  return {
    security: [{ [bearer.name]: [] }],
    json,
    error,
    body: (schema) => ({ required: true, content: { 'application/json': { schema } } }),
    common: {
      401: error('No API key, or an unknown or revoked one.'),
      429: error('Too many requests for this key; see the Retry-After header.'),
    },
  };
}
