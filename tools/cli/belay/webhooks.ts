import type { Command } from 'commander';
import { table } from './io.ts';
import type { CommandContext } from './jobs.ts';

/** `belay webhooks ...`: the tenant's outgoing webhooks and their delivery logs (role admin). */
export function registerWebhooks(program: Command, ctx: CommandContext): void {
  const print = (data: unknown, human: () => string): void =>
    ctx.io.out(ctx.json() ? JSON.stringify(data, null, 2) : human());
  const hooks = program
    .command('webhooks')
    .description('webhooks told when a job waits for a person (role admin)');
  hooks
    .command('add <url>')
    .description(
      'register a webhook (https; a Slack incoming-webhook URL works as it is) and print its signing secret once',
    )
    .option('--description <text>', 'what it is for')
    .action(async (url: string, opts: { description?: string }) => {
      const res = await (await ctx.client()).request<{ webhook: { webhookId: string }; secret: string }>(
        'POST',
        '/notifications/webhooks',
        {
          url,
          ...(opts.description ? { description: opts.description } : {}),
        },
      );
      print(res, () => `${res.webhook.webhookId}\nsigning secret (shown only this once): ${res.secret}`);
    });
  hooks
    .command('list')
    .description('list webhooks')
    .action(async () => {
      const res = await (await ctx.client()).request<{
        webhooks: { webhookId: string; url: string; revokedAt?: string }[];
      }>('GET', '/notifications/webhooks');
      print(res, () =>
        table(res.webhooks.map((h) => [h.webhookId, h.revokedAt ? 'stopped' : 'active', h.url])),
      );
    });
  hooks
    .command('remove <webhookId>')
    .description('stop a webhook')
    .action(async (id: string) => {
      const res = await (await ctx.client()).request(
        'DELETE',
        `/notifications/webhooks/${encodeURIComponent(id)}`,
      );
      print(res, () => `stopped ${id}`);
    });
  hooks
    .command('deliveries <webhookId>')
    .description("a webhook's delivery log, newest first: outcome and every attempt's status")
    .action(async (id: string) => {
      const res = await (await ctx.client()).request<{
        deliveries: {
          at: string;
          jobId: string;
          step: string;
          outcome: string;
          attempts: { status: number }[];
        }[];
      }>('GET', `/notifications/webhooks/${encodeURIComponent(id)}/deliveries`);
      print(res, () =>
        table(
          res.deliveries.map((d) => [
            d.at,
            d.jobId,
            d.step,
            d.outcome,
            d.attempts.map((a) => a.status).join(','),
          ]),
        ),
      );
    });
}
