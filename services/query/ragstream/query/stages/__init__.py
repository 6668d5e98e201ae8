"""Query stages, one module each, in pipeline order: filter, keywords, embed, graph (entity and
relation search), retrieve (chunk search), pick (graph chunks), merge, rerank, budget, answer;
query/engine.py runs them."""
