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
# The image reads photos of labels: the vision extra (OCR models inside its wheel). OpenCV,
# which it brings, is the headless build since rapidocr 3; libGL and GLib, which the full build
# needed, stay until an image built without them has read a label.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgl1 libglib2.0-0 \
    && rm -rf /var/lib/apt/lists/*
RUN EXTRAS=vision sh /usr/local/bin/install.sh /src \
    && useradd --create-home --uid 10001 sommelier

USER sommelier
WORKDIR /home/sommelier
ENTRYPOINT ["sh", "/usr/local/bin/entrypoint.sh"]
CMD ["sommelier", "bot"]
