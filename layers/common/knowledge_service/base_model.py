"""The base of every pydantic model this package defines.

``defer_build``: a model's validator and serializer are built the first time it is used
(a request validates or renders it, a route's schema asks for it), never when its module
is imported. A cold start then defines the models of every route its function serves but
builds only those its first request touches — building one costs 0.3–1.5 ms, defining
one a fraction of that (``docs/benchmarks.md``, "The request path end to end").
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A pydantic model built on first use. Subclasses add their own ``model_config``;
    pydantic merges it over this one, so ``defer_build`` is never lost."""

    model_config = ConfigDict(defer_build=True)
