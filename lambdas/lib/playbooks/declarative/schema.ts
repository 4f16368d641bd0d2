/**
 * The declarative playbook format (YAML or JSON): a playbook for a flow that needs no code.
 * This zod schema is the format's definition: files are checked with it (`read.ts`) and the
 * published JSON Schema for editors (`playbooks/playbook.schema.json`) is generated from it.
 *
 * A step is one of a fixed set of forms, told apart by the key that carries its action:
 * `actions` (a scripted step), `agent` (an agent step: a goal a model carries out) or `signIn`
 * (the application's sign-in). A new form is added to {@link STEP_FORMS}, leaving the others
 * untouched; `read.ts`, `problems.ts` and `compile.ts` tell the forms apart by the same key.
 */
import { z } from 'zod';
import { MODEL_SPEC_PATTERN } from '../../agent/model-spec.ts';
import { NAME_PATTERN } from '../define.ts';
import { FormSignInSchema } from '../form-sign-in.ts';
import { TargetSchema } from '../target.ts';

/** A text that may hold `{{ ... }}` references (inputs, earlier evidence, the idempotency key). */
const Template = z
  .string()
  .describe(
    'Text with {{references}}: {{inputs.a.b}}, {{evidence.<step>.<field>}}, {{idempotencyKey}}, {{jobId}}, {{stepId}}; filters: {{inputs.q | url}} (also lower, upper, trim). In fill values only: {{credentials.username}}, {{credentials.password}}.',
  );

/** A regular expression, as text (`^/orders/[^/]+$`). */
const Pattern = z.string().min(1).describe('A regular expression (JavaScript syntax), e.g. ^/orders/[^/]+$');

const Name = z.string().regex(NAME_PATTERN, 'lower-case letters, digits and dashes, starting with a letter');

const When = {
  when: Template.optional().describe(
    'Do this only when the text renders non-empty (and not "false"), e.g. {{inputs.phone}}',
  ),
};

const Missing = {
  missing: z
    .string()
    .optional()
    .describe('What to say when the target is not on the page (the step then fails with this text)'),
};

/** Reading one value off the page (or the record a probe found): one of these forms. */
const READ_FORMS = [
  z
    .object({
      target: TargetSchema.optional().describe(
        "The element to read; in a probe's evidence, default: the record itself",
      ),
      attr: z.string().min(1).optional().describe('Read this attribute (href, data-version)'),
      text: z.literal(true).optional().describe('Read the text (the default)'),
      value: z.literal(true).optional().describe("Read a form field's value"),
      count: z.literal(true).optional().describe('Count the elements the target finds'),
      match: Pattern.optional().describe(
        'Keep only part of the text, attribute or value read: a regular expression whose first group (or whole match) is the value; no match means the value is not there. E.g. attr: href, match: "[?&]post=(\\d+)"',
      ),
    })
    .strict(),
  z
    .object({
      url: Pattern.describe(
        "A regular expression on the page's path (no query string unless query: true): its first group, or the whole match",
      ),
      query: z
        .literal(true)
        .optional()
        .describe(
          'Match the path with its query string (/post.php?post=7&action=edit) instead of the path alone',
        ),
    })
    .strict(),
  z.object({ const: z.union([z.string(), z.number(), z.boolean(), z.null()]) }).strict(),
  z.object({ template: Template }).strict(),
] as const;

/** Each read form with `extra` keys of its own (an evidence field's type, a check's value). */
function readWith<T extends z.ZodRawShape>(extra: T) {
  return z.union([
    READ_FORMS[0].extend(extra),
    READ_FORMS[1].extend(extra),
    READ_FORMS[2].extend(extra),
    READ_FORMS[3].extend(extra),
  ]);
}

const ReadSchema = z.union(READ_FORMS);

const EvidenceFieldSchema = readWith({
  type: z
    .enum(['string', 'integer', 'number', 'boolean'])
    .optional()
    .describe(
      'The value as a string (default), a whole number, a number or a boolean; a value that is not one means "not verified"',
    ),
  optional: z.boolean().optional().describe('A missing value is null instead of "not verified"'),
});

/** Evidence fields by name, each read off the page (or the record a probe found). */
const EvidenceFields = z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/), EvidenceFieldSchema);

/** How long a declarative step's `expect` waits for the page to show it, unless it says (`timeoutMs`). */
export const EXPECT_TIMEOUT_MS = 10_000;

const CheckSchema = readWith({
  equals: Template.describe('What the value must be'),
  compare: z
    .enum(['exact', 'text', 'loose', 'digits'])
    .optional()
    .describe(
      'exact (trimmed), text (spaces collapsed; the default), loose (no spaces, any case), digits (only the digits)',
    ),
  ...When,
});

const ExpectSchema = z
  .object({
    url: Pattern.optional().describe("The page's path must match"),
    visible: z
      .union([TargetSchema, z.array(TargetSchema)])
      .optional()
      .describe('Must be visible'),
    noError: z
      .boolean()
      .optional()
      .describe('A visible error ([role="alert"]) means not verified (default true)'),
    checks: z.array(CheckSchema).optional(),
    evidence: EvidenceFields.optional().describe(
      'The evidence recorded when the step is verified; at least one check, url, visible or field',
    ),
    timeoutMs: z
      .number()
      .int()
      .min(0)
      .max(120_000)
      .optional()
      .describe(
        'How long the page has to show all of this after the step acted: it is looked at again until it does (default 10000); a visible error ends the wait at once',
      ),
  })
  .strict();

const TargetOrOptions = <T extends z.ZodRawShape>(extra: T) =>
  z.union([z.object({ target: TargetSchema, ...extra, ...When, ...Missing }).strict(), TargetSchema]);

/** One action of a scripted step. Exactly one action key per item. */
export const ActionSchema = z.union([
  z.object({ goto: Template.describe('A path of the application, or a URL'), ...When }).strict(),
  z
    .object({
      fill: z.object({ target: TargetSchema, value: Template, ...When, ...Missing }).strict(),
    })
    .strict(),
  z
    .object({
      select: z
        .object({
          target: TargetSchema,
          value: Template.describe('The option value or label'),
          ...When,
          ...Missing,
        })
        .strict(),
    })
    .strict(),
  z.object({ check: TargetOrOptions({ checked: z.boolean().optional() }) }).strict(),
  z
    .object({
      click: TargetOrOptions({
        wait: z
          .enum(['load', 'response', 'none'])
          .optional()
          .describe(
            "After the click: load (the default) waits for the page to finish loading; response waits for the answer to the request the click sends (a form that saves in the background, with no new page: the step's commits, else the first POST, PUT, PATCH or DELETE); none goes on at once",
          ),
      }),
    })
    .strict(),
  z
    .object({
      press: z
        .object({
          key: z.string().min(1).describe('A key, e.g. Enter'),
          target: TargetSchema.optional(),
          ...When,
        })
        .strict(),
    })
    .strict(),
  z
    .object({
      waitFor: z.union([
        z
          .object({
            target: TargetSchema.optional(),
            url: Pattern.optional(),
            state: z.enum(['visible', 'hidden']).optional(),
            timeoutMs: z.number().int().min(1).max(60_000).optional(),
            ...When,
            ...Missing,
          })
          .strict(),
        TargetSchema,
      ]),
    })
    .strict(),
  z
    .object({
      takeover: z
        .object({
          reason: Template.describe(
            'What the person does in the live browser, in words; the job waits until they press Done and the step starts again from its precondition, where this action then passes',
          ),
          ...When,
        })
        .strict(),
    })
    .strict(),
]);

const StartsAtSchema = z.union([
  z.literal('anywhere').describe('The step starts on any page (a first step that navigates)'),
  z
    .object({
      path: Template.describe('The page the step starts on; its restore goes there'),
      pathPattern: Pattern.optional().describe('Paths that count as the start (default: exactly the path)'),
      ready: TargetSchema.describe(
        'The element the step acts on first: missing there means the layout changed',
      ),
      signedIn: z.boolean().optional().describe('The step needs the account signed in (default true)'),
    })
    .strict(),
]);

export const ProbeSchema = z
  .object({
    goto: Template.describe(
      "Where the application lists the write's effects, e.g. /orders?key={{idempotencyKey | url}}",
    ),
    at: Pattern.optional().describe("The page's path there (default: exactly goto's path)"),
    records: TargetSchema.describe(
      'Each record of this write: use where to match the idempotency key (or another value) in code',
    ),
    absent: TargetSchema.describe('Shown when the application has no such record ("no orders")'),
    evidence: EvidenceFields.optional(),
  })
  .strict();

/**
 * A write's probe that reads the page instead of counting records: done when every check
 * holds, absent when every check's value is on the page and one differs, unknown when one is
 * not on the page (a 404, another layout). No model is asked: a frozen agent step's probe.
 */
export const ChecksProbeSchema = z
  .object({
    goto: Template.describe(
      "The page that shows the write's effect, e.g. /customers/{{inputs.customerId | url}}",
    ),
    at: Pattern.optional().describe("The page's path there (default: exactly goto's path)"),
    checks: z
      .array(CheckSchema)
      .min(1, 'at least one check')
      .describe(
        'What the page shows once the write happened: all hold -> done; all read and one differs -> absent; one not on the page -> unknown',
      ),
    evidence: EvidenceFields.optional().describe('Read off the page when the answer is done'),
  })
  .strict();

/** A scripted probe: records counted by the key, or checks read off one page. */
export const ScriptedProbeSchema = z.union([ProbeSchema, ChecksProbeSchema]);

/** Most actions an agent step may be given per attempt (each is a model decision, paid for). */
export const MAX_AGENT_ACTIONS = 50;

const ModelSpec = z
  .string()
  .regex(MODEL_SPEC_PATTERN, 'local, bedrock:<model id>, anthropic:<model id> or openai:<model id>');

const AgentSchema = z
  .object({
    start: Template.describe(
      'The page the step starts on (a path of the application); every attempt starts there, and its recorded actions replay there',
    ),
    goal: Template.describe(
      'What to do, in words, for the model: {{inputs.x}} and {{evidence.<step>.<field>}} are filled in (other references stay as written); page text never is the goal',
    ),
    fields: z
      .record(z.string().min(1), Template)
      .optional()
      .describe(
        "label -> value the goal sets, e.g. { Phone: '{{inputs.phone}}' }: what the local policy fills",
      ),
    maxActions: z
      .number()
      .int('a whole number of actions')
      .min(1, 'at least 1 action')
      .max(MAX_AGENT_ACTIONS, `at most ${MAX_AGENT_ACTIONS} actions per attempt`)
      .optional()
      .describe('Most actions (model decisions) per attempt (default 12)'),
    model: ModelSpec.optional().describe(
      'The model unless the job names one: local (default, offline and rule-based), bedrock:<id>, anthropic:<id>, openai:<id>',
    ),
    sensitiveInputs: z
      .array(
        z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'a dot path of an input, e.g. card.number'),
      )
      .optional()
      .describe(
        'Inputs the model never sees (dot paths): it is shown {{inputs.x}} instead, and the value goes only into the field whose label names it in fields. Inputs named like a secret (password, token, cardNumber) are sensitive anyway',
      ),
  })
  .strict();

/**
 * A write's probe answered by the step's model from one page (done, absent, duplicate or unknown),
 * checked against what its `checks` read there: page text alone never settles a write.
 */
export const AgentProbeSchema = z
  .object({
    agent: z
      .object({
        goto: Template.describe(
          "The page that shows the write's effect, e.g. /customers/{{inputs.customerId}}; the model only reads it",
        ),
        at: Pattern.optional().describe("The page's path there (default: exactly goto's path)"),
        question: Template.describe(
          'Asked about that page, answered done, absent, duplicate or unknown: quote the values it must show, e.g. Does the record show phone "{{inputs.phone}}"?',
        ),
        checks: z
          .array(CheckSchema)
          .min(1, 'at least one check')
          .optional()
          .describe(
            "The page's own data, read by code, that the model's answer must agree with: done stands only when every check holds, absent only when every check was read and one differs; anything else goes to a person. Without checks, absent is never concluded",
          ),
        evidence: EvidenceFields.optional().describe(
          'Read off the page when the answer is done (required for done without checks)',
        ),
      })
      .strict(),
  })
  .strict();

/** An evidence field's name. */
const FieldName = z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/);

/** What a write says about itself: what it does to the application, and the request that commits it. */
const WriteFacts = {
  effect: z
    .enum(['creates', 'sets'])
    .optional()
    .describe(
      'Writes: creates (the default) makes something new (a record, an order): evidence that was already on the page before the action cannot complete it (see newEvidence); sets puts state to a value: when expect already holds before the action, the step is done without acting (already satisfied)',
    ),
  newEvidence: z
    .array(FieldName)
    .min(1)
    .optional()
    .describe(
      'Writes that create: evidence fields that name the new record (its id): when expect already held before the action, the step completes only if each of these changed; else its probe decides',
    ),
  commits: z
    .object({
      method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE']).optional().describe('default: any of them'),
      path: Pattern.describe("A regular expression on the request's path, e.g. ^/wp-admin/post\\.php$"),
      repeats: z
        .boolean()
        .optional()
        .describe(
          'The step sends this request more than once on purpose (several lines saved one by one): without it, a second one in the same step is refused and the write is left to its probe',
        ),
    })
    .strict()
    .optional()
    .describe(
      'Writes: the request that commits the write, when the page sends others of its own (a heartbeat, autosave) or the action sends several: it is the one waited for (click wait: response), counted and watched; the others are background. Once it has gone, another in the same step is refused unless repeats is true',
    ),
};

/** A write approved on its effect: prepared up to its commit, shown, and committed only as approved. */
const ApproveSchema = z
  .union([
    z.literal('effect'),
    z
      .object({
        effect: z.literal(true),
        shows: z
          .record(z.string().min(1), TargetSchema)
          .optional()
          .describe(
            'Texts on the page that are part of what is approved, by a name for people (an amount the site computed): { Amount: { testId: amount } }',
          ),
      })
      .strict(),
  ])
  .describe(
    "Writes: effect binds the approval to what will be submitted. The step is prepared up to its last action (the commit); a person approves the form's fields and values as the page holds them (secrets masked) with a screenshot; at execution it is prepared again and committed only if the page would submit exactly what was approved, else the person is asked again with the changes shown. Replaces needsApproval.",
  );

const StepCommon = {
  id: Name,
  title: z.string().min(1).optional().describe('One line for people (required except for signIn steps)'),
  app: Name.describe('The application the step works in (a key of applications)'),
  needsApproval: z.boolean().optional(),
  sensitive: z.array(z.string().min(1)).optional().describe('CSS selectors masked in screenshots'),
};

export const ScriptedStepSchema = z
  .object({
    ...StepCommon,
    kind: z.enum(['read', 'write']).describe('write: it has a side effect outside the browser'),
    startsAt: StartsAtSchema,
    actions: z.array(ActionSchema).describe('What the step does; in a write, the last action commits it'),
    expect: ExpectSchema,
    idempotencyKey: z
      .object({ field: TargetSchema.describe('A form field (often hidden) that takes the key') })
      .strict()
      .optional()
      .describe(
        'Writes only: where the site takes an idempotency key; it is set just before the last action',
      ),
    probe: ScriptedProbeSchema.optional().describe(
      'Writes: how to find the effect of an attempt whose outcome is unknown: records by the key ({ goto, records, absent }) or checks read off a page ({ goto, checks })',
    ),
    refusal: z
      .union([z.enum(['alert', 'none']), TargetSchema])
      .optional()
      .describe("Writes: where the page says it refused the write (default: the page's alert)"),
    approve: ApproveSchema.optional(),
    ...WriteFacts,
  })
  .strict();

export const SignInStepSchema = z
  .object({
    ...StepCommon,
    kind: z.literal('read').optional(),
    signIn: z.literal(true).describe("The application's sign-in (its formSignIn), as a step"),
    home: z.string().regex(/^\//).optional().describe('Where its restore goes (default /)'),
  })
  .strict();

export const AgentStepSchema = z
  .object({
    ...StepCommon,
    kind: z.enum(['read', 'write']).describe('write: it has a side effect outside the browser'),
    agent: AgentSchema,
    expect: ExpectSchema.describe('What shows the step worked, checked after the model says done'),
    probe: z
      .union([ProbeSchema, ChecksProbeSchema, AgentProbeSchema])
      .optional()
      .describe(
        "Writes: how to find the effect of an attempt whose outcome is unknown: scripted, or { agent: ... } answered by the step's model",
      ),
    refusal: z
      .union([z.enum(['alert', 'none']), TargetSchema])
      .optional()
      .describe("Writes: where the page says it refused the write (default: the page's alert)"),
    ...WriteFacts,
  })
  .strict();

/** The step forms, each with the key that carries its action (a step has exactly one of them). */
export const STEP_FORMS = {
  actions: ScriptedStepSchema,
  agent: AgentStepSchema,
  signIn: SignInStepSchema,
} as const;

/** The keys that carry a step's action, one per step form. */
export const STEP_FORM_KEYS = Object.keys(STEP_FORMS) as (keyof typeof STEP_FORMS)[];

export const StepSchema = z.union([ScriptedStepSchema, AgentStepSchema, SignInStepSchema]);

/** The action keys, in the order `ActionSchema` lists their forms. */
export const ACTION_KEYS = [
  'goto',
  'fill',
  'select',
  'check',
  'click',
  'press',
  'waitFor',
  'takeover',
] as const;

const ApplicationSchema = z
  .object({
    formSignIn: FormSignInSchema.omit({ name: true }).describe(
      'A form sign-in: selectors or accessible names of its fields (the name is the key)',
    ),
  })
  .strict();

/** A declarative playbook file. */
export const DeclarativePlaybookSchema = z
  .object({
    $schema: z.string().optional(),
    name: Name,
    version: z.number().int().min(1),
    description: z.string().min(1),
    inputs: z
      .record(z.string(), z.unknown())
      .describe('The inputs as a JSON Schema (type: object); jobs are checked against it'),
    exampleInputs: z.record(z.string(), z.unknown()).optional(),
    applications: z.record(Name, ApplicationSchema),
    screenshots: z.enum(['default', 'writes', 'every-step', 'none']).optional(),
    sensitive: z.array(z.string().min(1)).optional(),
    tenants: z.array(z.string().min(1)).optional(),
    actionCache: z
      .enum(['tenant', 'shared'])
      .optional()
      .describe(
        "Whose action cache the agent steps use: each tenant's own (default), or shared by every tenant for entries holding only the playbook's own text",
      ),
    steps: z.array(StepSchema).min(1),
  })
  .strict();

export type DeclarativePlaybook = z.infer<typeof DeclarativePlaybookSchema>;
export type DeclarativeStep = z.infer<typeof StepSchema>;
export type ScriptedStep = z.infer<typeof ScriptedStepSchema>;
export type SignInStepSpec = z.infer<typeof SignInStepSchema>;
export type AgentStepSpec = z.infer<typeof AgentStepSchema>;
export type AgentProbeSpec = z.infer<typeof AgentProbeSchema>;
export type Action = z.infer<typeof ActionSchema>;
export type Expect = z.infer<typeof ExpectSchema>;
export type Probe = z.infer<typeof ProbeSchema>;
export type ChecksProbe = z.infer<typeof ChecksProbeSchema>;
export type ScriptedProbe = z.infer<typeof ScriptedProbeSchema>;
export type Read = z.infer<typeof ReadSchema>;
export type EvidenceField = z.infer<typeof EvidenceFieldSchema>;
export type Check = z.infer<typeof CheckSchema>;
export type StartsAt = z.infer<typeof StartsAtSchema>;
