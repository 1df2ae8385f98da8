"""Test-time search over fused fragments (paper §4); see search.py for the cost model.

from drtriton.search import search, SearchConfig, TemplatePolicy
result = search(task_source, TemplatePolicy(), SearchConfig(device="cpu"))
result.cover, result.hybrid, result.hybrid_ok
"""

from __future__ import annotations

from drtriton.search.policy import Policy, TemplatePolicy
from drtriton.search.search import FragmentResult, SearchConfig, SearchResult, VerdictCache, search
from drtriton.search.stitch import stitch

__all__ = [
    "FragmentResult",
    "Policy",
    "SearchConfig",
    "SearchResult",
    "TemplatePolicy",
    "VerdictCache",
    "search",
    "stitch",
]
