# The Sommelier bot. Build: docker build -t sommelier .   (docker-compose.yml does this)
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md alembic.ini ./
COPY backend ./backend
COPY migrations ./migrations
COPY docker/install.sh docker/entrypoint.sh /usr/local/bin/
RUN sh /usr/local/bin/install.sh /src \
    && useradd --create-home --uid 10001 sommelier

USER sommelier
WORKDIR /home/sommelier
ENTRYPOINT ["sh", "/usr/local/bin/entrypoint.sh"]
CMD ["sommelier", "bot"]
