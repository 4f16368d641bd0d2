/**
 * How long the Streamable HTTP endpoint lets one call wait, and how often a waiting call looks
 * at the job. API Gateway ends an integration after 30 s (and the API's function after 29 s).
 */

/** The longest one `wait_for_job` call waits at `POST /mcp` (the rest of the 29 s is for its reads). */
export const HTTP_MAX_WAIT_SECONDS = 20;

/** Between two looks at a job while `wait_for_job` waits. */
export const WAIT_POLL_MS = 1000;

/** The longest `wait_for_job` a caller may ask for (`belay mcp` waits that long; `/mcp` less). */
export const MAX_WAIT_SECONDS = 3600;
