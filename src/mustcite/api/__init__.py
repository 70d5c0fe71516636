"""The REST API (FastAPI): ``mustcite.api.app.create_app(recommender)``; ``mustcite serve`` runs it."""
