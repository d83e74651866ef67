"""What Docker would run, run here as plain shell: the Dockerfile's install into a fresh venv
(a non-editable install, so the packaged migrations are the ones used) and the entry point,
which migrates before it starts the command. Also checks docker-compose.yml by reading it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml  # PyYAML comes with the test dependencies

ROOT = Path(__file__).resolve().parents[2]


def test_dockerfile_install_and_entrypoint_as_plain_shell(tmp_path: Path) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "sh /usr/local/bin/install.sh /src" in dockerfile
    assert '"/usr/local/bin/entrypoint.sh"' in dockerfile
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}"}
    env = {k: v for k, v in env.items() if not k.startswith("SOMMELIER_")}
    subprocess.run(
        ["sh", str(ROOT / "docker" / "install.sh"), str(ROOT)], check=True, env=env, timeout=600
    )
    workdir = tmp_path / "home"
    workdir.mkdir()
    result = subprocess.run(
        [
            "sh",
            str(ROOT / "docker" / "entrypoint.sh"),
            "sommelier",
            "catalog",
            "search",
            "--type",
            "sparkling",
            "--json",
        ],
        cwd=workdir,
        env={**env, "SOMMELIER_DATABASE_URL": f"sqlite:///{workdir}/bot.db"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "database is up to date" in result.stdout
    assert '"Moët & Chandon Impérial Brut"' in result.stdout


def test_compose_file_wires_the_bot_to_postgres_and_langfuse() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "bot", "langfuse-web", "langfuse-worker"} <= set(services)
    bot = services["bot"]
    assert bot["build"] == "." and "env_file" not in bot
    assert bot["environment"]["SOMMELIER_DATABASE_URL"].startswith("postgresql://")
    assert bot["environment"]["LANGFUSE_HOST"] == "http://langfuse-web:3000"
    # No database publishes a port; whatever is published binds the loopback interface only.
    for name, service in services.items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), name
        if name in ("postgres", "langfuse-db", "clickhouse", "redis", "s3"):
            assert "ports" not in service, name
    # Secrets come from the env file, never from the compose file itself.
    secret_keys = ("PASSWORD", "SECRET", "_KEY", "SALT", "REDIS_AUTH")
    for name, service in services.items():
        for key, value in (service.get("environment") or {}).items():
            if key.endswith(secret_keys) and not key.endswith("ACCESS_KEY_ID"):
                assert str(value).startswith("${"), f"{name}.{key} must come from .env"
            if key.endswith("DATABASE_URL"):
                assert ":${" in str(value), f"{name}.{key} must take its password from .env"
    example = (ROOT / ".env.example").read_text()
    assert "SOMMELIER_TELEGRAM_BOT_TOKEN=CHANGEME" in example


def test_every_service_gets_only_what_it_needs() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        if "image" in service:
            image = service["image"]
            tag = image.rsplit("/", 1)[-1].partition(":")[2]
            assert tag and tag != "latest", f"{name}: pin {image} to a tag"
        assert "env_file" not in service, f"{name}: list its variables, not the whole .env"
    bot = set(services["bot"]["environment"])
    assert bot <= {
        *(k for k in bot if k.startswith("SOMMELIER_")),
        "LANGFUSE_HOST", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY",
    }  # fmt: skip
    for name in ("langfuse-web", "langfuse-worker"):
        env = services[name]["environment"]
        assert not any(k.startswith("SOMMELIER_") for k in env), name
        assert "SALT" in env and "ENCRYPTION_KEY" in env
    assert services["langfuse-web"]["image"].endswith(":4")
    clickhouse = services["clickhouse"]["image"].rpartition(":")[2]
    assert tuple(map(int, clickhouse.split("."))) >= (26, 4)  # what Langfuse 4 recommends
    # Nothing secret is written in the file itself: every secret comes from .env, with no
    # default to fall back on.
    for name, service in services.items():
        for key, value in (service.get("environment") or {}).items():
            if re.search(r"PASSWORD|SECRET|TOKEN|SALT|ENCRYPTION_KEY|API_KEY", key):
                assert re.fullmatch(r"\$\{\w+(:\?[^}]*|:-)\}", str(value)), f"{name}: {key}"


# Images of projects that stopped publishing or were archived: a pull fails, or gets no fixes.
ARCHIVED = {
    "minio/minio": "MinIO's community edition stopped publishing images in October 2025",
    "quay.io/minio/minio": "archived in February 2026; older tags miss CVE-2025-62506",
    "bitnami/": "Bitnami's free images left Docker Hub in September 2025",
}


def test_no_image_comes_from_an_archived_project() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, service in services.items():
        image = service.get("image", "")
        for gone, why in ARCHIVED.items():
            assert not image.startswith(gone), f"{name}: {image} ({why})"


def _preflight(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The compose file's preflight script, run by sh as the container runs it."""
    service = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["preflight"]
    script = service["command"][-1].replace("$$", "$")  # compose's escape for a literal $
    names = {k: "x" * 32 for k in service["environment"]}
    return subprocess.run(
        ["sh", "-c", script], env={"PATH": "/usr/bin:/bin", **names, **env},
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip


def test_nothing_starts_while_a_secret_is_still_the_example_placeholder() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    example = (ROOT / ".env.example").read_text()
    placeholders = set(re.findall(r"^#?\s*(\w+)=\S*CHANGEME", example, re.MULTILINE))
    checked = set(services["preflight"]["environment"])
    assert placeholders <= checked, placeholders - checked
    refused = _preflight({"LANGFUSE_SALT": "CHANGEME", "POSTGRES_PASSWORD": "CHANGEME"})
    assert refused.returncode == 1
    assert "LANGFUSE_SALT" in refused.stdout and "POSTGRES_PASSWORD" in refused.stdout
    assert _preflight({}).returncode == 0
    for name in services.keys() - {"preflight"}:
        assert _starts_after_preflight(services, name), name


def _starts_after_preflight(services: dict, name: str) -> bool:  # type: ignore[type-arg]
    waits = services[name].get("depends_on") or {}
    return "preflight" in waits or any(_starts_after_preflight(services, w) for w in waits)
