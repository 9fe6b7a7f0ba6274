/**
 * The titles of the service checks as a user reads them, in the order zekt doctor prints them and
 * the console's Settings lists them: written out here, not taken from the code under test.
 */
export const SERVICE_CHECK_TITLES = [
  'Configuration',
  'Database',
  'GitHub App credentials',
  'Clock',
  'Webhook deliveries',
  'Installations',
  'Actions OIDC issuer',
  'Alert URL',
] as const;
