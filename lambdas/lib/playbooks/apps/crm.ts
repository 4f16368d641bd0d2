/** The demo CRM (`demo/sites/crm`): customer records and their change log. */
import type { Application } from '../contract.ts';
import { demoSiteApplication } from './demo-site.ts';

export const crmApplication: Application = demoSiteApplication('crm');
