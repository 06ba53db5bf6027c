/** The fixed word lists a seeded tenant draws from: labels, names, agents, failure reasons. */

export const TENANT = { organizationId: 1701, tenantId: 'acme' } as const;

/**
 * authMethods values as the administration console labels them. Several methods are joined with
 * ", ", and some single labels hold commas inside their parentheses: a client must not split naively.
 */
export const AUTH_METHODS: readonly (readonly [string, number])[] = [
  ['Password (Local Directory)', 30],
  ['Password (cloud deployment)', 14],
  ['Password (Cloud Deployment), Verify', 10],
  ['Certificate (cloud deployment)', 8],
  ['Mobile SSO (iOS)', 7],
  ['Mobile SSO (Android)', 5],
  ['Verify', 4],
  ['RSA SecurID (Token, PIN)', 4],
  ['Password (Local Directory), RSA SecurID (Token, PIN)', 3],
  ['Kerberos (Windows Integrated, IWA)', 4],
  ['Device Compliance (with Workspace ONE UEM), Mobile SSO (iOS)', 3],
  ['RADIUS (cloud deployment)', 2],
  ['Password', 2],
];

/** User agents (deviceId) with the deviceType a LOGIN reports for them. */
export const DEVICES: readonly { readonly agent: string; readonly deviceType: string }[] = [
  {
    agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    deviceType: 'Windows 10',
  },
  {
    agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
    deviceType: 'Mac OS X',
  },
  {
    agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
    deviceType: 'iOS',
  },
  {
    agent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
    deviceType: 'Android',
  },
  { agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', deviceType: 'Linux' },
  { agent: 'Hub/23.12.0 (iPad; iOS 17.3.1; Scale/2.00)', deviceType: 'iOS' },
  { agent: 'Apache-HttpClient/4.5.14 (Java/17.0.10)', deviceType: 'Unknown' },
];

export const LOGIN_FAILURES = [
  'Invalid username or password.',
  'Your account is locked. Contact your administrator.',
  'Certificate validation failed.',
  'Verify request was denied by the user.',
  'User is not found in the directory.',
] as const;

export const LOGIN_ERRORS = [
  'Unable to reach the connector for directory corp.example.com.',
  'No authentication method is configured for this network range.',
  'Certificate revocation check failed (OCSP responder unreachable).',
  'Directory service unavailable: LDAP bind timed out after 30000 ms.',
] as const;

export const LAUNCH_FAILURES = [
  'User is not entitled to this application.',
  'SAML assertion could not be generated: signing certificate expired.',
  'Application is disabled.',
] as const;

export const LAUNCH_ERRORS = [
  'Invalid launch request.',
  'Resource could not be found by name.',
  'Resource UUID could not be determined.',
  'Resource type could not be determined.',
] as const;

export const RESOURCE_TYPES = [
  'SAML 2.0',
  'WS-Fed',
  'Web Application Link',
  'OpenID Connect',
  'Horizon Desktop',
  'Citrix Application',
] as const;

export const APPLICATIONS = [
  'Salesforce',
  'Workday',
  'Office 365',
  'ServiceNow',
  'Slack',
  'Zoom',
  'Jira Cloud',
  'Confluence',
  'GitHub Enterprise',
  'Box',
  'Concur',
  'Horizon Desktop Pool 01',
] as const;

export const GROUPS = [
  'ALL USERS',
  'Engineering',
  'Finance',
  'Sales EMEA',
  'Contractors',
  'Help Desk',
  'Admins (Tier 1)',
] as const;

export const DOMAINS = ['corp.example.com', 'corp.example.com', 'emea.example.com', 'System Domain'] as const;

export const FIRST_NAMES = [
  'ana', 'ben', 'chloe', 'dev', 'eva', 'femi', 'gus', 'hana', 'ivan', 'jo', 'kai', 'lena', 'marc',
  'nia', 'omar', 'pia', 'quinn', 'raj', 'sofia', 'tom', 'uma', 'vik', 'wen', 'yusuf', 'zoe',
] as const;

export const LAST_NAMES = [
  'adams', 'brown', 'costa', 'dubois', 'eriksen', 'fischer', 'garcia', 'haddad', 'ito', 'jensen',
  'kowalski', 'lopez', 'muller', 'nguyen', 'okafor', 'patel', 'rossi', 'silva', 'tanaka', 'weber',
] as const;

/** Services that act without a user id (actorId null, a service name, no domain). */
export const SYSTEM_SERVICES = ['directory-sync-service', 'provisioning-adapter', 'access-policy-engine'] as const;

export const OAUTH_CLIENTS = ['Catalog__OAuth2Client', 'WorkspaceONE_Intelligent_Hub', 'gateway-demo', 'reporting-export'] as const;

export const RULE_SETS = ['default_access_policy_set', 'contractors_policy', 'mobile_only_policy'] as const;
