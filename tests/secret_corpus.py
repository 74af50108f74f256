# ruff: noqa: E501  (a table of generators and sentences reads best one kind per line)
"""A corpus of fake secrets (>= 150 of >= 40 kinds) and tricky non-secrets for redaction.

Every value is generated here from a seeded random.Random at import, in the shape its
vendor documents (prefix, alphabet, length); none is a real credential, and none is kept
in a data file where a push-protection scanner would trip over it. Each secret comes
with the sentence it is said in, the way people paste credentials into a chat: in an
env line, a config snippet, a shell command, or plain prose. The non-secrets are what a
careless detector would take for one: hashes, UUIDs, git SHAs, digests, addresses,
placeholders, and prose about passwords.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def r(alphabet: str, n: int) -> str:
    """n random characters, always mixing classes so no value reads like a word."""
    mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if alphabet == HEX or not mixed or (
            any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
        ):
            return s


def _jwt() -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': r(ALNUM, 8), 'iat': 1714557600})}.{r(URLSAFE, 43)}"


def _basic() -> str:
    return base64.b64encode(f"deploy:{r(ALNUM, 14)}".encode()).decode()


def _pem() -> str:
    body = "\\n".join(r(B64, 64) for _ in range(4))
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\\n{body}\\n-----END OPENSSH PRIVATE KEY-----"


def _discord() -> str:
    uid = base64.b64encode(str(_rng.randrange(10**17, 10**18)).encode()).decode().rstrip("=")
    return f"{uid}.{r(URLSAFE, 6)}.{r(URLSAFE, 38)}"


def _aws_secret() -> str:
    return r(B64, 40)


# Passphrase words: nouns and adjectives, no English function word ("to", "the", "of").
_WORDS = (
    "horse battery staple correct purple monkey river falcon copper lantern maple orbit velvet "
    "tundra pepper glacier harbor meadow quartz saddle thunder walnut zephyr cactus ember fjord "
    "gravel hazel igloo jungle kettle lemon marble nectar oyster pebble raven sierra timber violet"
).split()


def _passphrase() -> str:
    return "-".join(_rng.sample(_WORDS, _rng.choice((3, 4))))


def _word_password() -> str:
    """hunter2-Blue: a word, a digit or two, a separator and a capitalised word."""
    return f"{_rng.choice(_WORDS)}{_rng.randrange(1, 99)}{_rng.choice(('-', '_', ''))}{_rng.choice(_WORDS).capitalize()}"


# Prose long enough (> 256 characters) that a key standing alone is no longer "a short
# text": only the access key id or the words around it can tell it apart from base64.
_PAD = (
    "We went through the rollout plan again, the cache warm-up, the flaky retry test in CI "
    "and who is on call next week; nothing else changed since Tuesday's meeting, and the "
    "dashboard numbers look the same as they did before the migration started. "
)
_AKIA = "AKIA" + "Q7XK2M4PLR8TZW3N"


# kind -> (value generator, sentences with {s} where the secret goes)
KINDS: dict[str, tuple[Callable[[], str], list[str]]] = {
    "aws-access-key": (lambda: "AKIA" + r(string.ascii_uppercase + string.digits, 16), [
        "export AWS_ACCESS_KEY_ID={s}", "the access key id is {s}", "aws configure said {s}",
    ]),
    "aws-secret-key": (_aws_secret, [
        "aws_secret_access_key = {s}", "AKIA" + "Q7XK2M4PLR8TZW3N" + " / {s}",
        "AKIAQ7XK2M4PLR8TZW3N:{s}", "AWS secret: {s}", "{s}",
    ]),
    "github-pat": (lambda: "ghp_" + r(ALNUM, 36), [
        "export GITHUB_TOKEN={s}", "git clone https://{s}@github.com/acme/api.git",
        "my token: {s}",
    ]),
    "github-fine-grained": (lambda: "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59), [
        "use {s} for the CI job", "GH_TOKEN={s}", "fine-grained PAT {s}",
    ]),
    "github-oauth": (lambda: "gho_" + r(ALNUM, 36), ["-H 'Authorization: token {s}'", "oauth token {s}"]),
    "gitlab-pat": (lambda: "glpat-" + r(URLSAFE, 20), ["GITLAB_TOKEN: {s}", "use {s} as the password"]),
    "gitlab-runner": (lambda: "glrt-" + r(URLSAFE, 20), ["--token {s}", "runner token {s}"]),
    "openai-key": (lambda: "sk-proj-" + r(URLSAFE, 48) + "T3BlbkFJ" + r(URLSAFE, 20), [
        "OPENAI_API_KEY={s}", 'client = OpenAI(api_key="{s}")', "here is my key {s}",
    ]),
    "anthropic-key": (lambda: "sk-ant-api03-" + r(URLSAFE, 93) + "AA", [
        "ANTHROPIC_API_KEY={s}", "x-api-key: {s}", "claude key {s}",
    ]),
    "slack-bot-token": (lambda: f"xoxb-{_rng.randrange(10**11, 10**12)}-{_rng.randrange(10**12, 10**13)}-{r(ALNUM, 24)}", [
        'SLACK_BOT_TOKEN="{s}"', "the bot token is {s}",
    ]),
    "slack-webhook": (lambda: f"https://hooks.slack.com/services/T{r(string.ascii_uppercase + string.digits, 8)}/B{r(string.ascii_uppercase + string.digits, 10)}/{r(ALNUM, 24)}", [
        "post to {s} please", "webhook_url: {s}",
    ]),
    "stripe-secret": (lambda: "sk_live_" + r(ALNUM, 24), ["stripe.api_key = '{s}'", "live key {s}"]),
    "stripe-webhook": (lambda: "whsec_" + r(ALNUM, 32), ["STRIPE_WEBHOOK_SECRET={s}", "signing secret {s}"]),
    "google-api-key": (lambda: "AIza" + r(URLSAFE, 35), ["GEMINI_API_KEY: {s}", "?key={s}&callback=init"]),
    "huggingface": (lambda: "hf_" + r(string.ascii_letters, 34), ["huggingface-cli login --token {s}", "HF token {s}"]),
    "npm": (lambda: "npm_" + r(ALNUM, 36), ["//registry.npmjs.org/:_authToken={s}", "npm token {s}"]),
    "pypi": (lambda: "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 60), ["password = {s}", "twine upload -p {s} dist/*"]),
    "sendgrid": (lambda: "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43), ["SENDGRID_API_KEY='{s}'", "sendgrid {s}"]),
    "jwt": (_jwt, ["Authorization: Bearer {s}", "the cookie was session={s}", "jwt {s}"]),
    "private-key": (_pem, ['{{"private_key": "{s}"}}', "key file:\\n{s}"]),
    "twilio-api-key": (lambda: "SK" + r(HEX, 32), ["TWILIO_API_KEY={s}", "twilio api key sid {s}"]),
    "twilio-auth-token": (lambda: r(HEX, 32), [
        "TWILIO_AUTH_TOKEN={s}", "twilio auth token {s}", "Twilio token: {s}",
    ]),
    "twilio-api-secret": (lambda: r(ALNUM, 32), ["TWILIO_API_SECRET={s}", "twilio api secret {s}"]),
    "discord-bot-token": (_discord, [
        "DISCORD_TOKEN={s}", "client.run('{s}')", "Authorization: Bot {s}", "discord bot token {s}",
    ]),
    "url-password-hash": (lambda: r(ALNUM, 6) + "#" + r(ALNUM, 6), [
        "postgres://app:{s}@db.internal:5432/prod", "mongodb+srv://admin:{s}@cluster0.abcd.mongodb.net/",
    ]),
    "url-password": (lambda: r(ALNUM, 16), [
        "redis://default:{s}@cache:6379/0", "amqp://guest:{s}@rabbit/", "DATABASE_URL=mysql://root:{s}@localhost/db",
    ]),
    "mailgun": (lambda: "key-" + r(HEX, 32), ["MAILGUN_API_KEY={s}", "mailgun key {s}", "api:{s}"]),
    "shopify": (lambda: "shpat_" + r(HEX, 32), ["X-Shopify-Access-Token: {s}", "shopify token {s}"]),
    "shopify-secret": (lambda: "shpss_" + r(HEX, 32), ["SHOPIFY_SECRET={s}", "shared secret {s}"]),
    "digitalocean": (lambda: "dop_v1_" + r(HEX, 64), ["DIGITALOCEAN_TOKEN={s}", "doctl auth init -t {s}", "DO token {s}"]),
    "linear": (lambda: "lin_api_" + r(ALNUM, 40), ["LINEAR_API_KEY={s}", "linear key {s}"]),
    "atlassian": (lambda: "ATATT3" + r(URLSAFE, 186), ["JIRA_API_TOKEN={s}", "atlassian token {s}"]),
    "telegram-bot": (lambda: f"{_rng.randrange(10**8, 10**10)}:AA{r(URLSAFE, 33)}", [
        "TELEGRAM_BOT_TOKEN={s}", "https://api.telegram.org/bot{s}/getMe", "telegram token {s}",
    ]),
    "age-secret-key": (lambda: "AGE-SECRET-KEY-1" + "".join(_rng.choice("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") for _ in range(58)), [
        "# created: 2024\\n{s}", "age key {s}",
    ]),
    "postman": (lambda: "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34), ["POSTMAN_API_KEY={s}", "postman key {s}"]),
    "doppler": (lambda: "dp.pt." + r(ALNUM, 43), ["DOPPLER_TOKEN={s}", "doppler token {s}"]),
    "sentry-dsn": (lambda: r(HEX, 32), [
        "SENTRY_DSN=https://{s}@o123456.ingest.sentry.io/7654321", "dsn: https://{s}@sentry.io/42",
    ]),
    "sentry-token": (lambda: "sntryu_" + r(HEX, 64), ["SENTRY_AUTH_TOKEN={s}", "sentry token {s}"]),
    "ethereum-private-key": (lambda: "0x" + r(HEX, 64), [
        "private key: {s}", "my wallet private key is {s}", "PRIVATE_KEY={s}",
    ]),
    "docker-login": (lambda: r(ALNUM, 18), [
        "docker login -u deploy -p {s} registry.acme.io", "docker login --password {s} ghcr.io",
    ]),
    "mysql-p": (lambda: r(ALNUM, 12), ["mysql -u root -p{s} prod", "mysqldump -uadmin -p{s} shop > dump.sql"]),
    "password-prose": (lambda: r(ALNUM, 10) + "!", [
        "my password is {s}", "the root password is {s} for now", "My password was {s} but I changed it",
    ]),
    "password-assignment": (lambda: r(ALNUM, 14), [
        "DB_PASSWORD={s}", 'password: "{s}"', "<password>{s}</password>",
    ]),
    "basic-auth": (_basic, ["Authorization: Basic {s}", "-H 'Authorization: Basic {s}'"]),
    "bearer-token": (lambda: r(ALNUM, 40), ["Authorization: Bearer {s}", "curl -H 'Authorization: Bearer {s}'"]),
    "curl-user": (lambda: r(ALNUM, 14), ["curl -u admin:{s} https://api.acme.io"]),
    "databricks": (lambda: "dapi" + r(HEX, 32), ["DATABRICKS_TOKEN={s}", "databricks token {s}"]),
    "pulumi": (lambda: "pul-" + r(HEX, 40), ["PULUMI_ACCESS_TOKEN={s}", "pulumi login with {s}"]),
    "grafana": (lambda: "glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8), ["GRAFANA_TOKEN={s}", "grafana sa token {s}"]),
    "heroku": (lambda: "HRKU-AA" + r(URLSAFE, 58), ["HEROKU_API_KEY={s}", "heroku key {s}"]),
    "planetscale": (lambda: "pscale_tkn_" + r(URLSAFE, 43), ["PLANETSCALE_TOKEN={s}", "pscale token {s}"]),
    "rubygems": (lambda: "rubygems_" + r(HEX, 48), ["GEM_HOST_API_KEY={s}", "gem key {s}"]),
    "notion": (lambda: "ntn_" + "".join(_rng.choice(string.digits) for _ in range(11)) + r(ALNUM, 35), ["NOTION_TOKEN={s}", "notion integration {s}"]),
    "dynatrace": (lambda: "dt0c01." + r(string.ascii_uppercase + string.digits, 24) + "." + r(string.ascii_uppercase + string.digits, 64), ["DT_API_TOKEN={s}", "dynatrace {s}"]),
    "sendinblue": (lambda: "xkeysib-" + r(HEX, 64) + "-" + r(ALNUM, 16), ["BREVO_KEY={s}", "brevo key {s}"]),
    "perplexity": (lambda: "pplx-" + r(ALNUM, 48), ["PPLX_API_KEY={s}", "perplexity key {s}"]),
    "hashicorp-vault": (lambda: "hvs." + r(URLSAFE, 90), ["VAULT_TOKEN={s}", "vault login {s}"]),
    "groq": (lambda: "gsk_" + r(ALNUM, 52), ["GROQ_API_KEY={s}", "groq key {s}"]),
    "azure-storage": (lambda: r(B64, 86) + "==", [
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
    ]),
    "square": (lambda: "sq0atp-" + r(URLSAFE, 22), ["SQUARE_ACCESS_TOKEN={s}", "square token {s}"]),
    "sshpass": (lambda: r(ALNUM, 12), ["sshpass -p {s} ssh deploy@10.0.0.5", "sshpass -p '{s}' scp a b:"]),
    "netrc": (lambda: r(ALNUM, 16), ["machine api.acme.io login deploy password {s}"]),
    "pgpassword": (lambda: r(ALNUM, 14), ["PGPASSWORD={s} psql -h db -U app"]),
    "mapbox-secret": (lambda: "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + r(ALNUM, 20) + "." + r(URLSAFE, 22), ["MAPBOX_SECRET={s}", "mapbox secret token {s}"]),
    "1password-service": (lambda: "ops_eyJ" + r(B64, 260), ["OP_SERVICE_ACCOUNT_TOKEN={s}", "1password token {s}"]),
    "flyio": (lambda: "fo1_" + r(URLSAFE, 43), ["FLY_API_TOKEN={s}", "fly token {s}"]),
    "prefect": (lambda: "pnu_" + r(ALNUM, 36), ["PREFECT_API_KEY={s}", "prefect key {s}"]),
    "easypost": (lambda: "EZAK" + r(ALNUM, 54), ["EASYPOST_API_KEY={s}", "easypost {s}"]),
    "frameio": (lambda: "fio-u-" + r(URLSAFE, 64), ["FRAMEIO_TOKEN={s}", "frame.io token {s}"]),
    "alibaba": (lambda: "LTAI" + r(ALNUM, 20), ["ALIBABA_ACCESS_KEY_ID={s}", "aliyun key {s}"]),
    "xai": (lambda: "xai-" + r(ALNUM, 80), ["XAI_API_KEY={s}", "grok key {s}"]),
    "replicate": (lambda: "r8_" + r(ALNUM, 37), ["REPLICATE_API_TOKEN={s}", "replicate token {s}"]),
    "newrelic": (lambda: "NRAK-" + r(string.ascii_uppercase + string.digits, 27), ["NEW_RELIC_API_KEY={s}", "new relic key {s}"]),
    "artifactory": (lambda: "AKCp" + r(ALNUM, 69), ["ARTIFACTORY_API_KEY={s}", "jfrog key {s}"]),
    "clojars": (lambda: "CLOJARS_" + r(LOWER_ALNUM, 60), ["CLOJARS_TOKEN={s}", "deploy token {s}"]),
    # An AWS secret access key has no prefix: it is known by the words around it or by its
    # access key id somewhere in the same text, however far away.
    "aws-secret-key-worded": (_aws_secret, [
        "AWS Secret Access Key [None]: {s}", "aws secret for the backup user is {s}",
        "Use {s} as the secret access key", "{s} is the aws secret", "secret access key -> {s}",
        "the aws secret access key for prod: {s}.", "aws secret key was `{s}`",
        "here is the secret access key for ci, {s}", "AWS secret (don't share): {s}",
        '"SecretAccessKey": "{s}"', "aws configure set aws_secret_access_key {s} --profile ci",
        "[default]\\naws_access_key_id = " + _AKIA + "\\nregion = eu-west-1\\noutput = json\\naws_secret_access_key = {s}",
        "AWS: {s}",
    ]),
    "aws-secret-key-far": (_aws_secret, [
        f"the deploy user's key id is {_AKIA}. {_PAD}And the other half, keep it safe: {{s}}",
        f"{_AKIA}\\n{_PAD}\\n{{s}}\\n{_PAD}",
        f"{{s}}\\n{_PAD}{_PAD}(that one goes with {_AKIA})",
    ]),
    # Word-only passwords said in prose: the value is shaped like a credential (joined
    # words, a digit, a capital inside) rather than like the rest of the sentence.
    "password-passphrase": (_passphrase, [
        "the password is {s}", "the wifi password is {s}", "passphrase is {s}",
        "my passphrase was {s}, don't tell anyone", "pw: {s}", "password: {s}",
        "The new password is {s}.", "Password is {s}", "my pw is {s}",
    ]),
    "password-word-mixed": (_word_password, [
        "my password is {s}", "the wifi password is {s}", "pw: {s}", "PW is {s}",
        "the guest wifi passphrase is {s}", "password was {s} until Monday",
    ]),
}  # fmt: skip


def _build() -> list[tuple[str, str, str]]:
    out = []
    for kind, (make, templates) in KINDS.items():
        for t in templates:
            s = make()
            out.append((kind, s, t.replace("{s}", s).replace("{{", "{").replace("}}", "}")))
    return out


# (kind, secret, the sentence it is said in)
SECRETS: list[tuple[str, str, str]] = _build()

_sha1 = [r(HEX, 40) for _ in range(3)]
_sha256 = [r(HEX, 64) for _ in range(3)]
_uuid = [f"{r(HEX, 8)}-{r(HEX, 4)}-4{r(HEX, 3)}-a{r(HEX, 3)}-{r(HEX, 12)}" for _ in range(3)]

NON_SECRETS: list[str] = [
    f"commit {_sha1[0]} broke the build",
    f"git checkout {_sha1[1][:12]} && git bisect good",
    f"the merge base is {_sha1[2]}",
    f"sha256sum says {_sha256[0]}  memctl.tar.gz",
    f"image: ghcr.io/acme/api@sha256:{_sha256[1]}",
    f"docker pull postgres@sha256:{_sha256[2]}",
    f"request id {_uuid[0]} failed with 502",
    f"session_id: {_uuid[1]}",
    f'"leafUuid": "{_uuid[2]}"',
    f"md5 {r(HEX, 32)} matches the upload",
    f"etag: \"{r(HEX, 32)}\"",
    f"integrity sha512-{r(B64, 86)}==",
    f"the tx hash is 0x{r(HEX, 64)}",
    f"send it to 0x{r(HEX, 40)} on mainnet",
    f"block hash 0x{r(HEX, 64)} was reorged",
    f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r(B64, 43)} dana@laptop",
    f"Twilio account SID AC{r(HEX, 32)} is in the dashboard",
    "-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "The password: see the vault entry \"db/prod\" in 1Password.",
    "my password is too short, what is the minimum?",
    "my password is incorrect according to the login page",
    "my password is stored in the keychain",
    "the password is required and must have 12 characters",
    "My password was reset yesterday, so the old one no longer works.",
    "the root password is whatever you set during install",
    "your password is hashed with argon2id before it is stored",
    "What if my password is compromised?",
    "password: str",
    "password = os.environ['DB_PASSWORD']",
    'password = getpass.getpass("Password: ")',
    "DB_PASSWORD=${DB_PASSWORD}",
    "PGPASSWORD=$PGPASSWORD psql -h db",
    "docker login -u deploy --password-stdin ghcr.io",
    "docker login -p is insecure; use --password-stdin",
    "mysql -u root -p prod (it prompts for the password)",
    "mysql -p asks for the password interactively",
    "sshpass -p \"$SSHPASS\" ssh host",
    "private key: see ~/.ssh/id_ed25519",
    "the private key is in the HSM, never on disk",
    "private key: <paste it here>",
    "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "ANTHROPIC_API_KEY=<your-key>",
    "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "api_key = \"YOUR_API_KEY\"",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}",
    "AKIAIOSFODNN7EXAMPLE is the documented example id",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY is the AWS docs' example secret",
    "postgres://user:password@localhost:5432/mydb",
    "redis://localhost:6379/0",
    "https://example.com:8080@mirror/path",
    "https://docs.sentry.io/platforms/python/",
    "https://o123456.ingest.sentry.io/api/7654321/envelope/",
    "mailto:dana@example.com",
    "ssh git@github.com:acme/api.git",
    "the key-value store is fine for sessions",
    "key-" + "value pairs are written one per line",
    "dop_v1_ is DigitalOcean's token prefix",
    "Shopify tokens start with shpat_ and are 38 characters long",
    "lin_api_ prefixes Linear's personal keys",
    "The Discord bot token looks like three base64 parts joined by dots.",
    "telegram: @acme_support",
    "the bot's id is 123456789 and its name is acme_bot",
    "age keys start with AGE-SECRET-KEY-1 followed by bech32",
    "Postman keys begin with PMAK-",
    "Doppler service tokens begin with dp.pt.",
    "SKU 4411-22 is out of stock",
    "TASK-1234: fix the flaky retry test",
    "ticket PROJ-4521 tracks the migration",
    "The build took 12m31s on runner ci-4",
    "version 3.11.7 (main, Dec  1 2026, 07:00:00)",
    "2026-12-01T07:28:50Z started, 2026-12-01T07:31:02Z finished",
    "192.168.1.20:5432 refused the connection",
    "fe80::1ff:fe23:4567:890a is link-local",
    "color: #1f2937; background: #f9fafb;",
    "the base64 of 'hello' is aGVsbG8=",
    "token = tokenizer.encode(text)[0]",
    "max_tokens=4096, temperature=0.2",
    "def rotate_secret(secret_id: str) -> None:",
    "SECRET_KEY = get_random_secret_key()",
    "const token = process.env.GITHUB_TOKEN;",
    "user.password = make_password(raw_password)",
    "conn = psycopg.connect(user=user, password=password, host=host)",
    "Use a password manager; never reuse a password.",
    "The passcode is sent by SMS.",
    "He said the password was 'in the usual place'.",
    "passwordless login via magic links",
    "reset_password_token_expires_at = now + 1h",
    "__Secure-next-auth.session-token is httpOnly",
    "The JWT header eyJhbGciOiJIUzI1NiJ9 decodes to {\"alg\":\"HS256\"}",
    "Bearer tokens expire after one hour.",
    "Basic authentication is disabled on this endpoint.",
    "curl -u \"$USER:$PASS\" https://api.acme.io",
    "curl -u admin https://api.acme.io (prompts)",
    "rk_live_ and sk_live_ are Stripe's live prefixes",
    "the kubeconfig uses an exec plugin, no static token",
    "checksum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "npm_config_cache=/tmp/npm",
    "hf_hub_download(repo_id='acme/model')",
    "pypi-simple is the package index API",
    "SG.NAME.EMAIL is the template placeholder",
    "AIza is the prefix of Google API keys",
    "ghp_ is the prefix of classic PATs",
    "xoxb- marks a Slack bot token",
    "the secret sauce is caching",
    "keyboard shortcut: ctrl+k",
    "monkeypatch.setenv('TOKEN', 'x')",
    "Sentry DSN goes in SENTRY_DSN, see the dashboard",
    "dapi is short for data API",
    "HRKU-AA is Heroku's new key prefix",
    f"wallet address 0x{r(HEX, 40)}",
    f"trace id {r(HEX, 32)}",
    f"span id {r(HEX, 16)}",
    f"build {r(HEX, 7)} is live",
    f"job 4f3a{r(HEX, 28)} queued",
    "the salt is per-user and stored next to the hash",
    "the secret is out: we ship on Monday",
    # prose about passwords, said the way people say it
    "my password is the same as before",
    "the password is stored in the vault",
    "password is required",
    "the password is case-sensitive",
    "the password is hard-to-guess, which is the point",
    "is the password up-to-date?",
    "the wifi password is on the fridge",
    "pw: see the team 1Password",
    "the passphrase is long enough now",
    "my password was auto-generated by the IT portal",
    "the password is end-to-end encrypted",
    "the admin password is the one from the onboarding doc",
    "the password is well-known to everyone on the team",
    "the password is hashed-and-salted before it reaches the disk",
    "PW: same as the staging one",
    "The password was changed on Monday.",
    "my password is user_password in the fixtures",
    "password reset-link-sent is the event name",
    "passphrase: str | None = None",
    "the password is state-of-the-art argon2id",
    # AWS prose and 40-character things that are not a secret access key
    f"aws codecommit shows commit {r(HEX, 40)} on main",
    f"AWS ETag {r(HEX, 40).upper()} matches the local file",
    f"aws s3api head-object: ChecksumSHA1 {base64.b64encode(bytes(_rng.randrange(256) for _ in range(20))).decode()}",
    f"aws lambda get-function: CodeSha256 {base64.b64encode(bytes(_rng.randrange(256) for _ in range(32))).decode()}",
    "aws s3 cp ./Build2024/Release7/Assets3/Images/Icons ./out --recursive",
    "the AWS access key lives in /Users/Dana/Projects/Infra2/Terraform/V9",
    f"aws s3 cp logo.png s3://acme; data:image/png;base64,{r(B64, 120)}",
    f"aws kms decrypt printed:\\n{r(B64, 76)}\\n{r(B64, 76)}\\n{r(B64, 40)}",
    f"key id AKIAIOSFODNN7EXAMPLE was rotated. {_PAD}The build at /home/ci/Workspace2/Api/Src3/Main/Lib/Db is green.",
    f"key id AKIAIOSFODNN7EXAMPLE was rotated; commit {r(HEX, 40)} removed it from the repo",
    "the aws secret access key is in the vault, not in this chat",
    "aws secret access keys are 40 characters of base64",
]
