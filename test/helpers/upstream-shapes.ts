/** Documented upstream shapes the gateway never parses whole: the simulator's answers are checked against them. */
import { z } from 'zod';
import { auditReportEnvelopeSchema } from '../../src/upstream/identity/schemas.js';

/** `{error, error_description}` of a refused token request. */
export const tokenErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

/** One row: [epoch ms as string, user and domain, event text, object, record as a JSON string]. */
const auditRowSchema = z.tuple([z.string(), z.string().nullable(), z.string().nullable(), z.string().nullable(), z.string()]);

export const auditReportSchema = auditReportEnvelopeSchema.extend({ data: z.array(auditRowSchema) });

/** vAPI error body. */
export const vapiErrorSchema = z.object({
  type: z.string(),
  value: z
    .object({ messages: z.array(z.object({ id: z.string().optional(), default_message: z.string().optional() })).optional() })
    .optional(),
});
