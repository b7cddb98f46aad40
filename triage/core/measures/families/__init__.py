"""The measure registry, as ir_measures declares its measures: each family in its own module
declares its name, its parameters, the names ranx and trec_eval give it, the sentence
docs/measures.md prints (the page's tables are generated from here) and holds its kernel.

`FAMILIES`: the measures named by `--measures` (parsed by core/measures/names.py), in the order
the docs list them; `METRICS`: triage's four figures at k, by their key in the report. A family
and a metric of one module share its kernel (nDCG and ndcg, Success and hit_rate, RR and mrr);
triage's recall@k has its own (`recall`), distinct from R@k.
"""

from __future__ import annotations

from triage.core.measures.families import ap, bpref, judged, ndcg, p, r, recall, rprec, rr, success
from triage.core.measures.families.family import Family, Metric

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (ap.AP, p.P, r.R, rr.RR, ndcg.NDCG, success.SUCCESS, rprec.RPREC, bpref.BPREF, judged.JUDGED)
}

METRICS: dict[str, Metric] = {m.name: m for m in (success.HIT_RATE, recall.RECALL, rr.MRR, ndcg.NDCG_AT_K)}
