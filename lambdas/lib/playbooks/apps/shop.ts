/** The demo shop (`demo/sites/shop`): its accounts sign in with a password, an authenticator (TOTP) or a code texted to a person (SMS). */
import type { Application } from '../contract.ts';
import { demoSiteApplication } from './demo-site.ts';

export const shopApplication: Application = demoSiteApplication('shop');
