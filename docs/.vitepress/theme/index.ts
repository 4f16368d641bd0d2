/**
 * The site's theme: VitePress's default theme, plus the OpenAPI renderer's components
 * (`<OASpec>`, `<OAOperation>`) for the HTTP API reference.
 */
import type { Theme } from 'vitepress';
import DefaultTheme from 'vitepress/theme';
import { theme as openapiTheme } from 'vitepress-openapi/client';
import 'vitepress-openapi/dist/style.css';
import './custom.css';

export default {
  extends: DefaultTheme,
  async enhanceApp(ctx) {
    await openapiTheme.enhanceApp(ctx);
  },
} satisfies Theme;
