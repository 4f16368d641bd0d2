/** The demo billing portal (`demo/sites/billing`): billing accounts and their activity. */
import type { Application } from '../contract.ts';
import { demoSiteApplication } from './demo-site.ts';

export const billingApplication: Application = demoSiteApplication('billing');
