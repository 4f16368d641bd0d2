import { describe, expect, it } from 'vitest';
import { classifyRequests, committingRequest, type SentRequest } from '../../../lambdas/lib/commits.ts';

const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const req = (method: string, path: string, s: number, navigation = false): SentRequest => ({
  method,
  url: `http://127.0.0.1:8080${path}`,
  at: at(s),
  navigation,
});

describe('Function: committingRequest', () => {
  it.each([
    [undefined, 'POST', '/anything', true],
    [undefined, 'GET', '/anything', false],
    [{ path: '^/api/drafts$' }, 'PUT', '/api/drafts', true],
    [{ path: '^/api/drafts$' }, 'POST', '/api/drafts/1', false],
    [{ method: 'POST', path: '^/api/drafts$' }, 'PUT', '/api/drafts', false],
    [{ method: 'post', path: 'drafts' }, 'POST', '/api/drafts', true],
  ])('%j: %s %s -> %s', (spec, method, path, want) => {
    expect(committingRequest(spec)(method, `http://127.0.0.1:1${path}?q=1`)).toBe(want);
  });
});

describe('Function: classifyRequests', () => {
  it('tells the write from a heartbeat the page sends before and during the action', () => {
    const beat1 = req('POST', '/admin-ajax.php', 1);
    const save = req('POST', '/post.php', 3);
    const beat2 = req('POST', '/admin-ajax.php', 4);
    const out = classifyRequests([beat1, save, beat2], { commitFrom: at(2) });
    expect(out.commits).toEqual([save]);
    expect(out.background).toEqual([beat1, beat2]);
  });

  it('counts a second send of the write as a commit too (it went twice)', () => {
    const save1 = req('POST', '/post.php', 3);
    const save2 = req('POST', '/post.php', 5);
    expect(classifyRequests([save1, save2], { commitFrom: at(2) }).commits).toEqual([save1, save2]);
  });

  it('prefers a posted form (a navigation) to a script request sent first', () => {
    const widget = req('POST', '/widgets', 3);
    const form = req('POST', '/orders', 4, true);
    const out = classifyRequests([widget, form], { commitFrom: at(2) });
    expect(out.commits).toEqual([form]);
    expect(out.background).toEqual([widget]);
  });

  it('takes what the step names, whatever the order', () => {
    const beat = req('POST', '/admin-ajax.php', 3);
    const save = req('POST', '/post.php', 4);
    const out = classifyRequests([beat, save], { commits: { method: 'POST', path: '^/post\\.php$' } });
    expect(out).toEqual({ commits: [save], background: [beat] });
  });

  it('has no commit when the step sent nothing new', () => {
    expect(classifyRequests([], { commitFrom: at(0) })).toEqual({ commits: [], background: [] });
  });
});
