# ruff: noqa: E501  (a table of generators and sentences reads best one kind per line)
"""A corpus of fake secrets (>= 250 of >= 100 kinds) and tricky non-secrets for redaction.

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
import re
import string
import urllib.parse
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


# ---------------------------------------------------------------------------------------
# Kinds that reached disk and git, and the ways a key gets broken up on its way
# into a chat (a shell line continuation, a terminal's hard wrap, a look-alike letter).
# ---------------------------------------------------------------------------------------


def _sas_sig() -> str:
    """An Azure SAS signature: base64 of an HMAC-SHA256, URL-encoded as the URL carries it."""
    raw = base64.b64encode(bytes(_rng.randrange(256) for _ in range(32))).decode()
    while "+" not in raw and "/" not in raw:
        raw = base64.b64encode(bytes(_rng.randrange(256) for _ in range(32))).decode()
    return urllib.parse.quote(raw, safe="")


def _pem_b64(kind: str = "RSA PRIVATE KEY") -> str:
    """A PEM private key, base64-encoded once more the way kubeconfig and Secrets carry it."""
    body = "\n".join(r(B64, 64) for _ in range(6))
    pem = f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----\n"
    return base64.b64encode(pem.encode()).decode()


def _pem_b64_any() -> str:
    return _pem_b64(_rng.choice(("RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY")))


def _b64_random() -> str:
    return base64.b64encode(bytes(_rng.randrange(256) for _ in range(_rng.choice((48, 96, 180))))).decode()


def _cert_b64() -> str:
    body = "\n".join(r(B64, 64) for _ in range(5))
    pem = f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"
    return base64.b64encode(pem.encode()).decode()


def _connect_sid() -> str:
    return "s%3A" + r(URLSAFE, 32) + "." + urllib.parse.quote(r(B64, 43), safe="")


def _rails_session() -> str:
    return urllib.parse.quote(r(B64, 120) + "==", safe="") + "--" + r(HEX, 40)


def _basic_pair() -> str:
    return base64.b64encode(f"{_rng.choice(('deploy', 'ci', 'dana', 'robot$acme'))}:{r(ALNUM, 16)}".encode()).decode()


# Look-alikes a key may carry (pasted from a chat app or a PDF): Cyrillic, Greek and
# fullwidth letters that render like their ASCII twins.
_LOOKALIKE = {
    "a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441", "x": "\u0445",
    "y": "\u0443", "i": "\u0456", "s": "\u0455", "k": "\u043a", "A": "\u0391", "B": "\u0392",
    "E": "\u0395", "K": "\u039a", "M": "\u041c", "H": "\u041d", "T": "\u0422", "O": "\u039f",
    "P": "\u0420", "C": "\u0421", "X": "\u0425", "1": "\uff11", "7": "\uff17",
}  # fmt: skip


def _lookalike(token: str, lo: int = 0, hi: int | None = None) -> str:
    """Swap one character between lo and hi for its look-alike."""
    spots = [i for i, c in enumerate(token[: hi or len(token)]) if i >= lo and c in _LOOKALIKE]
    i = _rng.choice(spots)
    return token[:i] + _LOOKALIKE[token[i]] + token[i + 1 :]


def _guid() -> str:
    return f"{r(HEX, 8)}-{r(HEX, 4)}-4{r(HEX, 3)}-a{r(HEX, 3)}-{r(HEX, 12)}"


_SAS_HEAD = "sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2026-12-31T18:00:00Z&st=2026-12-01T10:00:00Z&spr=https"
_UPPER_DIGITS = string.ascii_uppercase + string.digits

_ISSUE_23: dict[str, tuple[Callable[[], str], list[str]]] = {
    "azure-sas-sig": (_sas_sig, [
        f"https://acmebackups.blob.core.windows.net/db/prod.bak?{_SAS_HEAD}&sig={{s}}",
        f"BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature={_SAS_HEAD}&sig={{s}}",
        f'az storage blob upload -c db -f prod.bak --sas-token "{_SAS_HEAD}&sig={{s}}"',
        "the SAS url is https://acme.queue.core.windows.net/jobs?sv=2021-08-06&sig={s}&se=2026-12-31T00%3A00%3A00Z&sp=raup",
        "AZURE_STORAGE_SAS_TOKEN=?sp=r&st=2026-12-01T09:00:00Z&se=2026-12-02T09:00:00Z&spr=https&sv=2022-11-02&sr=c&sig={s}",
        '"sasToken": "se=2026-12-31&sp=r&sv=2022-11-02&sr=b&sig={s}"',
        "SharedAccessSignature sr=acme.servicebus.windows.net&sig={s}&se=1798761600&skn=RootManageSharedAccessKey",
    ]),
    "presigned-url-signature": (lambda: r(HEX, 64), [
        "https://acme-exports.s3.eu-west-1.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261201T101500Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={s}",
        "https://storage.googleapis.com/acme-dumps/db.sql.gz?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature={s}",
    ]),
    "kube-client-key-data": (_pem_b64_any, [
        "users:\n- name: admin@prod\n  user:\n    client-certificate-data: " + _cert_b64() + "\n    client-key-data: {s}\n",
        "    client-key-data: {s}",
        '{{"users": [{{"name": "ci", "user": {{"client-key-data": "{s}"}}}}]}}',
    ]),
    "kube-client-key-data-opaque": (_b64_random, [
        "    client-key-data: {s}", "kubectl config set users.ci.client-key-data {s}",
    ]),
    "base64-pem-private-key": (_pem_b64_any, [
        "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " + _cert_b64() + "\n  tls.key: {s}\n",
        "the helm value is {s}, decode it with base64 -d",
        "PRIVATE_KEY_B64={s}",
    ]),
    "kube-token": (lambda: r(URLSAFE, 52), [
        "users:\n- name: deployer\n  user:\n    token: {s}\n",
        "kubectl config set-credentials deployer --token={s}",
    ]),
    "cookie-django-sessionid": (lambda: r(LOWER_ALNUM, 32), [
        "Cookie: sessionid={s}; csrftoken=" + r(ALNUM, 32),
        "curl -b 'sessionid={s}' https://admin.acme.io/admin/",
        'requests.get(url, cookies={{"sessionid": "{s}"}})',
        "-H 'cookie: messages=x; sessionid={s}; theme=dark'",
        '{{"name": "sessionid", "value": "{s}", "domain": ".acme.io", "httpOnly": true}}',
        's.cookies.set("sessionid", "{s}", domain="acme.io")',
    ]),
    "set-cookie-connect-sid": (_connect_sid, [
        "Set-Cookie: connect.sid={s}; Path=/; Expires=Thu, 31 Dec 2026 10:00:00 GMT; HttpOnly",
        "set-cookie: connect.sid={s}; Path=/; HttpOnly; SameSite=Lax",
    ]),
    "cookie-phpsessid": (lambda: r(LOWER_ALNUM, 26), [
        "Cookie: PHPSESSID={s}", "curl --cookie \"PHPSESSID={s}\" https://shop.acme.io/cart",
        "wget --header='Cookie: PHPSESSID={s}' https://shop.acme.io/orders",
        "https://shop.acme.io/checkout.php?PHPSESSID={s}",
    ]),
    "cookie-jsessionid": (lambda: r("0123456789ABCDEF", 32), [
        "Cookie: JSESSIONID={s}; Path=/app", "GET /app/orders;jsessionid={s} HTTP/1.1",
    ]),
    "cookie-rails-session": (_rails_session, [
        "Cookie: _acme_session={s}", "Set-Cookie: _storefront_session={s}; path=/; secure; HttpOnly",
    ]),
    "cookie-jar-line": (lambda: r(ALNUM, 40), [
        "#HttpOnly_.acme.io\tTRUE\t/\tTRUE\t1798761600\tsessionid\t{s}",
        ".acme.io\tTRUE\t/\tFALSE\t1798761600\tauth_session\t{s}",
    ]),
    "cookie-nextauth": (lambda: "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0.." + r(URLSAFE, 22) + "." + r(URLSAFE, 180) + "." + r(URLSAFE, 22), [
        "Cookie: __Secure-next-auth.session-token={s}",
    ]),
    "cookie-asp-net": (lambda: r(LOWER_ALNUM, 24), ["Cookie: ASP.NET_SessionId={s}; lang=en", "ASP.NET_SessionId={s}"]),
    "cookie-generic-session": (lambda: r(URLSAFE, 43), [
        "Set-Cookie: session={s}; Secure; HttpOnly", "Cookie: sid={s}; _ga=GA1.2.1234567890.1700000000",
        "document.cookie = 'auth_token={s}; path=/'",
    ]),
    "openai-key-continued": (lambda: "sk-proj-" + r(URLSAFE, 48) + "T3BlbkFJ" + r(URLSAFE, 20), [
        "export OPENAI_API_KEY={a}\\\n{b}",
        'curl https://api.openai.com/v1/models -H "Authorization: Bearer {a}\\\n{b}"',
        "OPENAI_API_KEY={a}\\\n    {b} python app.py",
    ]),
    "github-token-continued": (lambda: "ghp_" + r(ALNUM, 36), [
        "git clone https://{a}\\\n{b}@github.com/acme/api.git", "export GH_TOKEN={a}\\\n{b}",
    ]),
    "anthropic-key-continued": (lambda: "sk-ant-api03-" + r(URLSAFE, 93) + "AA", [
        "ANTHROPIC_API_KEY={a}\\\n{b} claude", "the key is {a}\\\n{b}",
    ]),
    "aws-secret-key-wrapped": (_aws_secret, [
        "aws_secret_access_key = {a}\n{b}", "AWS secret: {a}\n{b}",
        "AWS_SECRET_ACCESS_KEY={a}\n{b}\nAWS_DEFAULT_REGION=eu-west-1",
        "aws_access_key_id = " + _AKIA + "\naws_secret_access_key = {a}\n{b}",
    ]),
    "github-token-wrapped": (lambda: "ghp_" + r(ALNUM, 36), [
        "here is the token: {a}\n{b}", "GITHUB_TOKEN={a}\n{b}",
    ]),
    "stripe-key-wrapped": (lambda: "sk_live_" + r(ALNUM, 48), ["stripe key {a}\n{b}", "  {a}\n  {b}"]),
    "stripe-key-lookalike": (lambda: _lookalike("sk_live_" + r(ALNUM, 24), 0, 7), [
        "live key {s}", "stripe.api_key = '{s}'", "STRIPE_SECRET_KEY={s}", "use {s} for the prod webhook",
    ]),
    "github-token-lookalike": (lambda: _lookalike("ghp_" + r(ALNUM, 36), 0, 3), [
        "my token {s}", "git clone https://{s}@github.com/acme/api.git",
    ]),
    "openai-key-lookalike-body": (lambda: _lookalike("sk-proj-" + r(URLSAFE, 48) + "T3BlbkFJ" + r(URLSAFE, 20), 9, 40), [
        "OPENAI_API_KEY={s}", "key: {s}",
    ]),
    "aws-access-key-lookalike": (lambda: _lookalike("AKIA" + r(_UPPER_DIGITS, 16), 0, 4), [
        "access key id {s}", "AWS_ACCESS_KEY_ID={s}",
    ]),
    "key-zero-width": (lambda: "ghp_" + r(ALNUM, 36), ["the token is {a}\u200b{b}", "GH_TOKEN={a}\u2060{b}"]),
    "discord-webhook": (lambda: r(URLSAFE, 68), [
        "DISCORD_WEBHOOK_URL=https://discord.com/api/webhooks/" + str(_rng.randrange(10**17, 10**19)) + "/{s}",
        "post the alerts to https://discordapp.com/api/webhooks/" + str(_rng.randrange(10**17, 10**19)) + "/{s} please",
        "curl -X POST -H 'Content-Type: application/json' -d '{{\"content\": \"deployed\"}}' https://ptb.discord.com/api/webhooks/" + str(_rng.randrange(10**17, 10**19)) + "/{s}",
        "webhook = DiscordWebhook(url='https://discord.com/api/v10/webhooks/" + str(_rng.randrange(10**17, 10**19)) + "/{s}')",
    ]),
    "teams-webhook": (lambda: r(HEX, 32), [
        f"https://acme.webhook.office.com/webhookb2/{_guid()}@{_guid()}/IncomingWebhook/{{s}}/{_guid()}",
        f"TEAMS_WEBHOOK=https://acme365.webhook.office.com/webhookb2/{_guid()}@{_guid()}/IncomingWebhook/{{s}}/{_guid()}/V2{r(ALNUM, 20)}",
    ]),
    "docker-config-auth": (_basic_pair, [
        '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{s}"}}}}}}',
        '{{\n  "auths": {{\n    "ghcr.io": {{\n      "auth": "{s}"\n    }}\n  }}\n}}',
        'cat ~/.docker/config.json\n{{"auths":{{"registry.acme.io":{{"auth":"{s}","email":"ci@acme.io"}}}}}}',
    ]),
    "docker-identitytoken": (lambda: r(URLSAFE, 64), [
        '{{"auths": {{"acme.azurecr.io": {{"auth": "", "identitytoken": "{s}"}}}}}}',
    ]),
    "npmrc-auth": (_basic_pair, ["//registry.acme.io/npm/:_auth={s}", "_auth = {s}\nalways-auth = true"]),
    "okta-ssws": (lambda: "00" + r(URLSAFE, 40), [
        'curl -H "Authorization: SSWS {s}" https://acme.okta.com/api/v1/users',
        "Authorization: SSWS {s}", "the okta header is SSWS {s}", "OKTA_API_TOKEN={s}",
    ]),
    "auth-scheme-other": (lambda: r(ALNUM, 40), [
        "Authorization: Splunk {s}", "Authorization: GenieKey {s}", "-H 'Authorization: Klaviyo-API-Key {s}'",
    ]),
    "pgpass-line": (lambda: r(ALNUM, 14) + _rng.choice(("", "!", "#", "%")), [
        "db.internal:5432:prod:app:{s}",
        "cat ~/.pgpass\nlocalhost:5432:*:postgres:{s}\n",
        "echo '10.0.4.12:*:analytics:report_ro:{s}' >> ~/.pgpass",
        "*:*:*:replicator:{s}",
    ]),
    "netrc-multiline": (_guid, [
        "machine api.heroku.com\n  login dana@acme.io\n  password {s}\nmachine git.heroku.com\n  login dana@acme.io\n  password {s}",
        "cat ~/.netrc\nmachine github.com\nlogin dana\npassword {s}\n",
        "default login anonymous password {s}",
    ]),
    "gcp-private-key-id": (lambda: r(HEX, 40), [
        '"private_key_id": "{s}",',
        '{{"type": "service_account", "project_id": "acme-prod", "private_key_id": "{s}", "client_email": "ci@acme-prod.iam.gserviceaccount.com"}}',
        "private_key_id: {s}",
    ]),
    "gcp-oauth-token": (lambda: "ya29." + r(URLSAFE, 150), [
        "gcloud auth print-access-token\n{s}", "access token {s}", "GOOGLE_OAUTH_ACCESS_TOKEN={s}",
    ]),
    "google-refresh-token": (lambda: "1//0" + r(URLSAFE, 99), ['"refresh_token": "{s}"', "refresh token {s}"]),
    "azure-ad-client-secret": (lambda: r(ALNUM, 3) + str(_rng.randrange(10)) + "Q~" + r(ALNUM + "_~.-", 34), [
        "AZURE_CLIENT_SECRET={s}", "client secret value {s}",
        "az login --service-principal -u " + _guid() + " -p {s} --tenant acme.onmicrosoft.com",
    ]),
    "azure-servicebus-key": (lambda: r(B64, 43) + "=", [
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}",
    ]),
    "supabase": (lambda: "sbp_" + r(HEX, 40), ["SUPABASE_ACCESS_TOKEN={s}", "supabase login --token {s}", "my supabase pat {s}"]),
    "tailscale": (lambda: "tskey-auth-" + r(ALNUM, 12) + "CNTRL-" + r(ALNUM, 33), ["TS_AUTHKEY={s}", "tailscale up --authkey={s}", "the auth key {s}"]),
    "terraform-cloud": (lambda: r(ALNUM, 14) + ".atlasv1." + r(URLSAFE, 67), ['credentials "app.terraform.io" {{ token = "{s}" }}', "TFE_TOKEN={s}", "tf cloud {s}"]),
    "airtable-pat": (lambda: "pat" + r(ALNUM, 14) + "." + r(HEX, 64), ["AIRTABLE_API_KEY={s}", "airtable {s}"]),
    "figma": (lambda: "figd_" + r(URLSAFE, 40), ["FIGMA_TOKEN={s}", "X-Figma-Token: {s}", "figma pat {s}"]),
    "langsmith": (lambda: "lsv2_pt_" + r(HEX, 32) + "_" + r(HEX, 10), ["LANGCHAIN_API_KEY={s}", "langsmith key {s}"]),
    "pinecone": (lambda: "pcsk_" + r(ALNUM, 6) + "_" + r(ALNUM, 63), ["PINECONE_API_KEY={s}", "pinecone {s}"]),
    "neon": (lambda: "napi_" + r(LOWER_ALNUM, 64), ["NEON_API_KEY={s}", "neon key {s}"]),
    "sonarqube": (lambda: "sqp_" + r(HEX, 40), ["SONAR_TOKEN={s}", "sonar-scanner -Dsonar.token={s}", "sonar token {s}"]),
    "buildkite": (lambda: "bkua_" + r(HEX, 40), ["BUILDKITE_API_TOKEN={s}", "buildkite {s}"]),
    "contentful": (lambda: "CFPAT-" + r(URLSAFE, 43), ["CONTENTFUL_MANAGEMENT_TOKEN={s}", "contentful pat {s}"]),
    "mailchimp": (lambda: r(HEX, 32) + "-us" + str(_rng.randrange(1, 21)), ["MAILCHIMP_API_KEY={s}", "mailchimp {s}"]),
    "openrouter": (lambda: "sk-or-v1-" + r(HEX, 64), ["OPENROUTER_API_KEY={s}", "openrouter key {s}"]),
    "plaid-access": (lambda: "access-production-" + _guid(), ["PLAID_ACCESS_TOKEN={s}", "plaid item token {s}"]),
    "adafruit": (lambda: "aio_" + r(ALNUM, 28), ["ADAFRUIT_IO_KEY={s}", "adafruit key {s}"]),
    "shippo": (lambda: "shippo_live_" + r(HEX, 40), ["SHIPPO_API_TOKEN={s}", "shippo {s}"]),
    "circleci": (lambda: "CCIPAT_" + r(ALNUM, 22) + "_" + r(HEX, 40), ["CIRCLECI_TOKEN={s}", "circleci pat {s}"]),
    "resend": (lambda: "re_" + r(ALNUM, 8) + "_" + r(ALNUM, 24), ["RESEND_API_KEY={s}", "resend key {s}"]),
    "facebook-token": (lambda: "EAA" + r(ALNUM, 180), ["FB_ACCESS_TOKEN={s}", "page token {s}"]),
    "cloudflare-origin-ca": (lambda: "v1.0-" + r(HEX, 24) + "-" + r(HEX, 146), ["CF_ORIGIN_CA_KEY={s}", "origin ca key {s}"]),
    "dropbox": (lambda: "sl." + r(URLSAFE, 138), ["DROPBOX_TOKEN={s}", "dropbox access token {s}"]),
    "hf-org": (lambda: "api_org_" + r(string.ascii_letters, 34), ["HF_ORG_TOKEN={s}", "org token {s}"]),
    "typeform": (lambda: "tfp_" + r(URLSAFE, 59), ["TYPEFORM_TOKEN={s}", "typeform {s}"]),
    "readme": (lambda: "rdme_" + r(LOWER_ALNUM, 70), ["README_API_KEY={s}", "readme key {s}"]),
    "duffel": (lambda: "duffel_live_" + r(URLSAFE, 43), ["DUFFEL_TOKEN={s}", "duffel {s}"]),
    "flutterwave": (lambda: "FLWSECK-" + r(HEX, 32) + "-X", ["FLW_SECRET_KEY={s}", "flutterwave {s}"]),
    "scalingo": (lambda: "tk-us-" + r(URLSAFE, 48), ["SCALINGO_API_TOKEN={s}", "scalingo {s}"]),
    "infracost": (lambda: "ico-" + r(ALNUM, 32), ["INFRACOST_API_KEY={s}", "infracost {s}"]),
}  # fmt: skip


KINDS.update(_ISSUE_23)



# ---------------------------------------------------------------------------------------
# Round four: private keys in the shapes tools print them (PuTTY, JWK, openssl -text), a
# .env handed over in base64, and three vendor formats. A multi-line secret must lose
# every line ({s} puts it with real line breaks, {e} JSON-escaped).
# ---------------------------------------------------------------------------------------


def _b64_lines(n_bytes: int) -> str:
    body = base64.b64encode(bytes(_rng.randrange(256) for _ in range(n_bytes))).decode()
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def _hex_block(n_bytes: int) -> str:
    octets = [f"{_rng.randrange(256):02x}" for _ in range(n_bytes)]
    rows = [":".join(octets[i : i + 15]) for i in range(0, n_bytes, 15)]
    return ":\n".join("    " + row for row in rows)


def _b64url(n_bytes: int) -> str:
    return base64.urlsafe_b64encode(bytes(_rng.randrange(256) for _ in range(n_bytes))).decode().rstrip("=")


def _env_b64() -> str:
    env = (
        f"DATABASE_URL=postgres://app:{r(ALNUM, 18)}@db.internal:5432/prod\n"
        f"STRIPE_SECRET_KEY=sk_live_{r(ALNUM, 24)}\nSESSION_SECRET={r(ALNUM, 32)}\n"
    )
    return base64.b64encode(env.encode()).decode()


def _env_b64_plain() -> str:
    """A .env of names and values no detector knows by itself: the .env target says it."""
    env = f"APP_ENV=production\nRELEASE_CHANNEL=stable\nLICENSE_SEED={r(ALNUM, 12)}\n"
    return base64.b64encode(env.encode()).decode()


def _azdo_pat() -> str:
    return r(ALNUM, 52) + "JQQJ9" + _rng.choice("9DH") + r(ALNUM, 18) + "AZDO" + r(ALNUM, 4)


_PPK_PUB = f"AAAAC3NzaC1lZDI1NTE5AAAAI{r(B64, 43)}"
_RSA_PUB = "\n".join(r(B64, 64) for _ in range(5)) + "\n" + r(B64, 24)
_PPK_MAC = r(HEX, 64)
_MODULUS = "\n".join("    " + ":".join(f"{_rng.randrange(256):02x}" for _ in range(15)) + ":" for _ in range(3))
_ROUND4: dict[str, tuple[Callable[[], str], list[str]]] = {
    "putty-ppk-ed25519": (lambda: _b64_lines(48), [
        f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20260301\nPublic-Lines: 2\n{_PPK_PUB}\nPrivate-Lines: 1\n{{s}}\nPrivate-MAC: {_PPK_MAC}",
        f"cat ~/.ssh/deploy.ppk\\nPuTTY-User-Key-File-2: ssh-ed25519\\nEncryption: none\\nComment: deploy\\nPublic-Lines: 2\\n{_PPK_PUB}\\nPrivate-Lines: 1\\n{{e}}\\nPrivate-MAC: {_PPK_MAC}\\n",
    ]),
    "putty-ppk-rsa": (lambda: _b64_lines(_rng.choice((600, 900, 1190))), [
        f"here is the key from puttygen:\n\nPuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: rsa-key-20260301\nPublic-Lines: 6\n{_RSA_PUB}\nPrivate-Lines: 14\n{{s}}\nPrivate-MAC: {_PPK_MAC}\n",
        "Private-Lines: 10\r\n{s}\r\nPrivate-MAC: " + _PPK_MAC,
    ]),
    "jwk-ec-d": (lambda: _b64url(32), [
        f'{{{{"kty": "EC", "crv": "P-256", "x": "{_b64url(32)}", "y": "{_b64url(32)}", "d": "{{s}}"}}}}',
        f'{{{{\\n  \\"kty\\": \\"EC\\",\\n  \\"crv\\": \\"P-384\\",\\n  \\"d\\": \\"{{s}}\\",\\n  \\"x\\": \\"{_b64url(48)}\\"\\n}}}}',
        f"jwk:\n  kty: OKP\n  crv: Ed25519\n  x: {_b64url(32)}\n  d: '{{s}}'",
    ]),
    "jwk-rsa-d": (lambda: _b64url(256), [
        f'{{{{"keys": [{{{{"kty": "RSA", "kid": "signing-2026", "use": "sig", "n": "{_b64url(256)}", "e": "AQAB", "d": "{{s}}", "p": "{_b64url(128)}"}}}}]}}}}',
        f'const jwk = {{{{ kty: "RSA", e: "AQAB", n: "{_b64url(256)}", "d": "{{s}}" }}}};',
    ]),
    "env-base64": (_env_b64, [
        "echo '{s}' | base64 -d > .env", 'echo "{s}" | base64 --decode > .env.production',
        "base64 -d <<< {s} > /srv/app/.env && systemctl restart app",
    ]),
    "env-base64-plain": (_env_b64_plain, [
        "echo '{s}' | base64 -d > .env", "printf %s {s} | base64 -D > ./.env.local",
    ]),
    "openssl-rsa-text": (lambda: _hex_block(_rng.choice((128, 256, 384))), [
        f"$ openssl rsa -in server.key -text -noout\nPrivate-Key: (2048 bit, 2 primes)\nmodulus:\n{_MODULUS}\npublicExponent: 65537 (0x10001)\nprivateExponent:\n{{s}}\nprime1:\n    00:d1:7f",
        "RSA Private-Key: (1024 bit)\\nmodulus:\\n    00:c4:11\\npublicExponent: 65537 (0x10001)\\nprivateExponent:\\n{e}\\nprime1:\\n",
        "...\nprime2:\n    00:c9:7e:21\nexponent1:\n{s}\ncoefficient:\n    0a:1b",
    ]),
    "openssl-ec-priv": (lambda: _hex_block(32), [
        "$ openssl ec -in ec.key -text -noout\nread EC key\nPrivate-Key: (256 bit)\npriv:\n{s}\npub:\n    04:5a:11\nASN1 OID: prime256v1",
    ]),
    "posthog-personal": (lambda: "phx_" + r(ALNUM, _rng.choice((43, 47))), [
        "POSTHOG_PERSONAL_API_KEY={s}", "posthog personal key {s}", 'curl -H "Authorization: Bearer {s}" https://eu.posthog.com/api/projects/',
    ]),
    "azure-devops-pat": (_azdo_pat, [
        "AZURE_DEVOPS_EXT_PAT={s}", "my ado pat is {s}", "echo {s} | az devops login --organization https://dev.azure.com/acme",
        "git clone https://dana:{s}@dev.azure.com/acme/api/_git/api",
    ]),
    "launchdarkly-sdk": (lambda: "sdk-" + _guid(), [
        "LAUNCHDARKLY_SDK_KEY={s}", 'ldclient.set_config(Config("{s}"))', "the launchdarkly server key is {s}",
    ]),
}  # fmt: skip

KINDS.update(_ROUND4)


def _build() -> list[tuple[str, str, str]]:
    out = []
    for kind, (make, templates) in KINDS.items():
        for t in templates:
            s = make()
            if "{a}" in t:  # the secret split in two where the line breaks
                cut = _rng.randrange(len(s) * 2 // 5, len(s) * 3 // 5)
                a, b = s[:cut], s[cut:]
                PIECES[s] = (a, b)
                line = t.replace("{a}", a).replace("{b}", b)
            else:
                line = t.replace("{s}", s).replace("{e}", s.replace("\n", "\\n"))
            if "\n" in s:  # a block of lines: every line must go (a 2-digit tail says nothing)
                PIECES[s] = tuple(ln.strip() for ln in s.split("\n") if len(ln.strip()) >= 8)
            out.append((kind, s, line.replace("{{", "{").replace("}}", "}")))
    return out


# What must not survive of a secret that is not in its line in one piece: the halves of
# a split key; for a key with a look-alike letter, its ASCII body as well (a writer that
# escapes non-ASCII would otherwise hide a leak from a byte search).
PIECES: dict[str, tuple[str, ...]] = {}


def pieces(secret: str) -> tuple[str, ...]:
    """The strings that must all be gone once ``secret`` is redacted."""
    if secret in PIECES:
        return PIECES[secret]
    if not secret.isascii():
        tail = re.split(r"[^\x00-\x7f]", secret)[-1]
        return (secret, tail) if len(tail) >= 12 else (secret,)
    return (secret,)


# (kind, secret, the sentence it is said in)
SECRETS: list[tuple[str, str, str]] = _build()


def generate(seed: int) -> list[tuple[str, str, str]]:
    """The same kinds and sentences with other random values, for a held-out check."""
    state = _rng.getstate()
    _rng.seed(seed)
    try:
        return _build()
    finally:
        _rng.setstate(state)

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


def _png_b64(n: int) -> str:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(_rng.randrange(256) for _ in range(n))
    return base64.b64encode(png).decode()


def _wrapped(s: str, width: int) -> str:
    return "\n".join(s[i : i + width] for i in range(0, len(s), width))


# What the new detectors (cookies, split and wrapped keys, look-alike letters,
# credential files, signed URLs, auth schemes) must leave alone.
NON_SECRETS += [
    # images, certificates and other base64 that is data, wrapped or not
    f"![logo](data:image/png;base64,{_png_b64(300)})",
    f'<img src="data:image/png;base64,{_png_b64(120)}" alt="chart">',
    "Content-Type: image/png\nContent-Transfer-Encoding: base64\n\n" + _wrapped(_png_b64(400), 76),
    "-----BEGIN CERTIFICATE-----\n" + _wrapped(r(B64, 300), 64) + "\n-----END CERTIFICATE-----",
    "    certificate-authority-data: " + _cert_b64(),
    "    client-certificate-data: " + _cert_b64(),
    f"  tls.crt: {_cert_b64()}",
    "base64 -d <<< " + base64.b64encode(b"hello from the deploy script, nothing secret here").decode(),
    _wrapped(r(HEX, 256), 64),
    f"go.sum: golang.org/x/text v0.14.0 h1:{r(B64, 43)}=",
    f'"integrity": "sha512-{r(B64, 86)}=="',
    f'<script src="https://cdn.acme.io/app.js" integrity="sha384-{r(B64, 64)}" crossorigin="anonymous"></script>',
    f"checksum = \"{r(HEX, 64)}\"",
    f"git log --oneline\n{r(HEX, 7)} fix flaky test\n{r(HEX, 7)} bump deps\n{r(HEX, 7)} initial commit",
    f"Merge: {r(HEX, 7)} {r(HEX, 7)}\nAuthor: Dana <dana@acme.io>",
    f"uuid4() -> {_guid()}",
    f'"sessionId": "{_guid()}", "type": "user"',
    f"claude --resume {_guid()}",
    f"session {_guid()} ended after 42 turns",
    f"trace_id={r(HEX, 32)} span_id={r(HEX, 16)}",
    f"X-Request-Id: {_guid()}",
    f"ETag: W/\"{r(HEX, 40)}\"",
    # cookies that are not credentials, and code and prose about session cookies
    "Set-Cookie: theme=dark; Path=/; Max-Age=31536000",
    "Cookie: lang=en-US; tz=Europe/Berlin; consent=yes",
    'Set-Cookie: sessionid=""; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/',
    "Cookie: sessionid=<your-session-id>",
    "curl -b \"sessionid=$SESSION_ID\" https://admin.acme.io/",
    "SESSION_COOKIE_NAME = 'sessionid'",
    "request.cookies.get('connect.sid')",
    "the sessionid cookie is HttpOnly and expires after two weeks",
    "express-session signs connect.sid with the secret in SESSION_SECRET",
    "PHPSESSID and JSESSIONID are the default session cookie names",
    "Set-Cookie: __Host-csrf=1; Path=/; Secure",
    "session_id = request.session.session_key",
    "session_summary=current_session_summary,",
    "render(session_title=session_title_text, session_id=session_id)",
    "auth_backend=django_auth_ldap_backend",
    "https://acme.io/login?next=/dashboard&session=expired_by_timeout",
    "sid = os.getpid()",
    # shell and code with line continuations, and text that wraps at a width
    "docker run -d \\\n  --name api \\\n  -p 8080:80 \\\n  -e LOG_LEVEL=debug \\\n  acme/api:latest",
    "./configure --prefix=/usr/local \\\n  --enable-shared \\\n  --with-openssl=/opt/openssl",
    "CFLAGS=-O2\\\n-Wall -Wextra",
    "pip install \\\n    requests==2.32.3 \\\n    httpx==0.27.0",
    "aws s3 sync ./build s3://acme-site \\\n  --delete --cache-control max-age=3600",
    "The deployment finished without errors and every health check\npassed on the first try.",
    "internationalization\nlocalization\nconfiguration",
    "AbstractSingletonProxyFactoryBean\nSimpleBeanFactoryAwareAspectInstanceFactory",
    f"commit {r(HEX, 20)}\n{r(HEX, 20)}",
    # look-alike letters in real words of other scripts
    "Пароль хранится в хранилище, а не в чате.",
    "Ключ API лежит в vault, не в этом сообщении.",
    "Токен доступа истекает через час, обнови его в настройках.",
    "Ο κωδικός είναι αποθηκευμένος στο vault.",
    "ＡＰＩキーは環境変数にあります",
    "パスワードは1Passwordに保存してあります。",
    "sk_live_ — так начинаются боевые ключи Stripe",
    # credential-file shapes with nothing secret in them
    "the .pgpass format is hostname:port:database:username:password",
    "*:*:*:*:password",
    "12:00:00:PM:EST",
    "localhost:8080:api:v2:healthz",
    "ERROR:memctl.ingest:42:read_session:file not found",
    "main.c:12:5: error: expected ';' before '}' token",
    "00:1a:2b:3c:4d:5e is the MAC of eth0",
    "2026-12-01 10:15:42:123:INFO:started",
    "machine api.acme.io login deploy",
    "the .netrc file holds machine, login and password entries",
    '{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}',
    '{"auths": {"registry.acme.io": {"auth": ""}}}',
    '"auth": "oauth2", "scopes": ["read", "write"]',
    "auth: required",
    "author: Dana Scully",
    '"private_key_id": "<key id from the console>"',
    '"client_email": "ci@acme-prod.iam.gserviceaccount.com", "client_id": "108374620019283746501"',
    "client-key-data: <base64 of the key>",
    # signed-URL and Authorization shapes without a credential
    "sig = hmac.new(key, msg, hashlib.sha256).hexdigest()",
    "the SAS token's sig= parameter is an HMAC over the string-to-sign",
    "https://acme.blob.core.windows.net/public/logo.png",
    "?sv=2022-11-02&sp=r&sig=<signature>",
    "X-Amz-SignedHeaders=host&X-Amz-Expires=3600",
    "Authorization: SSWS ${OKTA_API_TOKEN}",
    "Okta uses the SSWS scheme for API tokens",
    "Authorization: Negotiate",
    "Authorization: Digest username=\"dana\", realm=\"acme\", qop=auth",
    "https://discord.com/api/webhooks/{webhook.id}/{webhook.token}",
    "Discord webhooks look like https://discord.com/api/webhooks/<id>/<token>",
    "https://discord.com/channels/123456789012345678/987654321098765432",
    "https://acme.webhook.office.com/webhookb2/<guid>@<guid>/IncomingWebhook/<hex>/<guid>",
    # placeholders and prefixes named in prose
    "ya29. is the prefix of Google OAuth access tokens",
    "Azure AD client secrets contain Q~ after the fourth character",
    "tskey-auth- keys are created in the admin console",
    "sbp_ tokens are Supabase personal access tokens",
    "sk-or-v1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "OPENROUTER_API_KEY=<your-openrouter-key>",
    "the Mailchimp data center is us21, see https://us21.admin.mailchimp.com",
    "access-sandbox-* tokens only work against the sandbox",
    "EAAB is the start of a Facebook app token",
]


# Round four: what the new detectors must leave alone, and the GitHub Actions cache keys
# that were taken for generic secrets.
NON_SECRETS += [
    f"Cache restored from key: setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-{r(HEX, 64)}",
    f"Cache saved with key: setup-uv-1-aarch64-apple-darwin-0.8.2-{r(HEX, 64)}",
    f"key: node-cache-Linux-x64-npm-{r(HEX, 64)}",
    f"[CI/test-2]   | Cache hit occurred on key setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-{r(HEX, 64)}, not saving cache.",
    f"Received 12582912 of 48211968 (26.1%), cache key: setup-python-Linux-22.04-Ubuntu-python-3.11.9-pip-{r(HEX, 64)}",
    f"  key: ${{{{ runner.os }}}}-cargo-registry-{r(HEX, 40)}",
    f"CACHE_KEY=pnpm-store-Linux-x64-{r(HEX, 40)}",
    f'{{"kty": "EC", "crv": "P-256", "x": "{_b64url(32)}", "y": "{_b64url(32)}", "use": "sig"}}',
    f'{{"kty": "RSA", "e": "AQAB", "kid": "2026-signing", "n": "{_b64url(256)}"}}',
    "a JWK's private part is \"d\"; the public key leaves it out",
    "Public-Key: (2048 bit)\nModulus:\n    00:c3:5e:91:7a:44:0b:1f:9e:2d:6a:53:88:17:c4:e2:\n    9a:71\nExponent: 65537 (0x10001)",
    f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: aes256-cbc\nComment: laptop\nPublic-Lines: 2\n{_PPK_PUB}",
    "Private-Lines: is followed by the key in base64, one line per 64 characters",
    "echo 'aGVsbG8gZnJvbSB0aGUgZGVwbG95IHNjcmlwdA==' | base64 -d > greeting.txt",
    "base64 --decode payload.b64 > .env  # the file comes from the vault",
    f"posthog.init('phc_{r(ALNUM, 43)}', {{{{ api_host: 'https://eu.i.posthog.com' }}}})",
    "phx_ keys are PostHog's personal API keys",
    f"LaunchDarkly client-side id {r(HEX, 24)} is public by design",
    "pip install launchdarkly-server-sdk-ai and use sdk-python's Config",
    f"the sdk-{r(HEX, 8)} build is on the mirror",
    "Azure DevOps PATs are 84 characters and carry JQQJ and AZDO signatures",
]
