// `mailroom --help`: every command, flag and environment variable, with the defaults as the code has them.
import { DEFAULT_API_URL } from '../contract/defaults.js';
import { MCP_WAIT_SLOTS } from '../contract/limits.js';
import { DEFAULTS } from '../server/server-options.js';

export const HELP = `Usage: mailroom serve [options]
       mailroom mcp [--api-url <url>] [--token-file <file>]

\`mailroom mcp\` serves the MCP tools (wait_for_message, list_messages,
get_message, delete_message) over stdio, for agents configured with a
command, in front of any mailbox HTTP API: --api-url (MAILROOM_API_URL,
default ${DEFAULT_API_URL}) and the token in MAILROOM_TOKEN (the agent's
env) or --token-file <file> (MAILROOM_TOKEN_FILE); --token <token> works
but shows it to every local user in \`ps\`, and warns.

Runs the embedded mail server: SMTP in, the mailbox HTTP API out.

Options (each also read from the environment variable shown):
  --smtp-port <port>        SMTP port, 0 = any free port      MAILROOM_SMTP_PORT   (default ${DEFAULTS.smtpPort})
  --http-port <port>        HTTP API port, 0 = any free port  MAILROOM_HTTP_PORT   (default ${DEFAULTS.httpPort})
  --host <address>          interface to bind                 MAILROOM_HOST        (default ${DEFAULTS.host})
  --domain <domain>         served domain, repeatable         MAILROOM_DOMAIN      (default ${DEFAULTS.domains[0]}; comma-separated in the variable)
  --retention <duration>    how long mail lives: 90s, 30m, 1h MAILROOM_RETENTION   (default 1h; a bare number is seconds)
  --max-messages <n>        global cap, oldest evicted first  MAILROOM_MAX_MESSAGES (default ${DEFAULTS.maxMessages}; "unlimited" for none)
  --max-message-bytes <n>   largest accepted message          MAILROOM_MAX_MESSAGE_BYTES (default ${DEFAULTS.maxMessageBytes})
  --max-store-bytes <n>     bytes of mail kept in memory,     MAILROOM_MAX_STORE_BYTES (default ${DEFAULTS.maxStoreBytes / 1024 / 1024}M; 512M, 2G, "unlimited")
                            oldest evicted first
  --max-recipients <n>      recipients per SMTP transaction   MAILROOM_MAX_RECIPIENTS (default ${DEFAULTS.maxRecipients}; the rest 452 4.5.3)
  --token-file <file>       require Authorization: Bearer     MAILROOM_TOKEN_FILE (or the token itself in MAILROOM_TOKEN)
                            with the token this file holds
  --token <token>           the same, on the command line     (visible in \`ps\`: prefer the two above; warns)
  --allowed-host <name>     answer to this Host too, repeatable MAILROOM_ALLOWED_HOST (default: loopback names only while on loopback)
  --allow-origin <origin>   let this web origin's pages call   MAILROOM_ALLOW_ORIGIN (e.g. https://app.example:8443; default: none)
                            the API, repeatable
  --wait-slots <n>          concurrent long-polls, 0 = off    MAILROOM_WAIT_SLOTS  (default ${DEFAULTS.waitSlots}; MCP waits have their own ${MCP_WAIT_SLOTS})
  --enable-faults           serve the test fault switch       MAILROOM_ENABLE_FAULTS=1
  --no-smtp-rules           no SMTP rules, no attempt log     MAILROOM_SMTP_RULES=0 (default on)
  --no-provider-apis        no provider send APIs (Resend,    MAILROOM_PROVIDER_APIS=0 (default on; docs/providers.md)
                            SES, SendGrid, ...) on the HTTP port
  --no-catch-all            refuse mail to domains not served MAILROOM_CATCH_ALL=0 (default: every domain's mail is
                            (550 5.1.2, unknown_domain)       taken; fresh addresses are made on the first --domain)
  --webhook <url>           post every event there, repeatable MAILROOM_WEBHOOK    (comma-separated in the variable; default retry policy)
  --webhook-secret-file <file>
                            sign those posts with the secret  MAILROOM_WEBHOOK_SECRET_FILE (or the secret itself in
                            this file holds                   MAILROOM_WEBHOOK_SECRET; default: made up at start,
                                                              shown by GET /api/v1/webhooks/{id} with the token)
  --webhook-secret <secret> the same, on the command line     (visible in \`ps\`; warns)
  --webhook-format <format> shape and sign the --webhook posts MAILROOM_WEBHOOK_FORMAT (default mailroom; resend, sendgrid,
                            as a provider's delivery events   mailgun, postmark or ses: docs/providers.md)
  --webhook-allow <host|cidr> the only webhook destinations,   MAILROOM_WEBHOOK_ALLOW (default: any; never link-local or cloud metadata)
                            repeatable
  --link-check-allow <host|cidr>                              MAILROOM_LINK_CHECK_ALLOW (default: none, so public hosts only;
                            a loopback or private host the    never link-local or cloud metadata)
                            UI's link check may reach (the
                            app under test), repeatable
  --no-webhooks             no webhooks, no /metrics          MAILROOM_WEBHOOKS=0  (default on)
  --smtp-tls                offer STARTTLS on the SMTP port   MAILROOM_SMTP_TLS=1  (default off, so no client meets a certificate)
                            with a certificate made at start
                            (self-signed: localhost, 127.0.0.1,
                            ::1) or the one given below
  --smtp-tls-cert <file>    PEM certificate (and chain) for   MAILROOM_SMTP_TLS_CERT (turns --smtp-tls on)
                            STARTTLS and --smtps-port
  --smtp-tls-key <file>     its PEM private key               MAILROOM_SMTP_TLS_KEY
  --smtp-require-tls        refuse MAIL FROM before STARTTLS  MAILROOM_SMTP_REQUIRE_TLS=1 (530 5.7.0; needs --smtp-tls)
  --smtps-port <port>       also listen with implicit TLS     MAILROOM_SMTPS_PORT  (default none; 0 = any free port)
                            (what port 465 is in production)
  --store <memory|url>      where mail (and the SMTP rules    MAILROOM_STORE       (default memory; e.g. redis://127.0.0.1:6379/0)
                            and attempt log) live; servers
                            given one Redis URL act as one service
  -h, --help                show this help
  -v, --version             show the version

API: GET|DELETE /api/v1/mailbox?address=A, GET /api/v1/mailbox/wait?address=A&since_id=ID,
     GET|POST|DELETE /api/v1/mailbox/rules?address=A, GET /api/v1/mailbox/attempts?address=A,
     GET|DELETE /api/v1/message/{id}?mailbox=A, GET /api/v1/message/{id}/raw?mailbox=A,
     GET|POST /api/v1/message/{id}/checks?mailbox=A,
     GET|POST /api/v1/webhooks, GET|DELETE /api/v1/webhooks/{id}, GET /api/v1/webhooks/{id}/deliveries,
     GET /api/v1/webhooks/{id}/dead-letters, POST /api/v1/webhooks/{id}/dead-letters/{event_id}/replay,
     GET /metrics, GET /healthz; MCP (streamable HTTP): POST /mcp
Web UI: open http://<host>:<http-port>/ in a browser (/?address=A opens one mailbox);
     its calls: GET /api/v1/mailboxes, GET /api/v1/events (server-sent events)`;
