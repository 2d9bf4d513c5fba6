"""The report: one offline HTML page over every stage's tables and figures, and the screening
priority lists. It reads tables and figures only, never a model (the layer of `pipeline.figures`)."""
from pipeline.report.build import discover, render_report
from pipeline.report.markup import mark_edits, markdown_tables
from pipeline.report.priority import priority_lists, ranked_images
from pipeline.report.provenance import collect_provenance

__all__ = ["collect_provenance", "discover", "mark_edits", "markdown_tables", "priority_lists", "ranked_images",
           "render_report"]
