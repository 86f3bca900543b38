"""`psbench criteria`: short, scripted experiments that answer a selection criterion per
driver (docs/criteria.md), each a module of this package with NAME, TITLE and
assess(Context) -> {driver: Verdict}. Adding a criterion is adding its module to
CRITERIA; documented claims (manifests' [claims]) fill the criteria none covers."""
